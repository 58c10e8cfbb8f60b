#!/usr/bin/env python3
"""The workloads of scripts/bench-mount-peers, each one command that prints its figure (or the table).

    mount_workloads.py make-small ROOT MANIFEST FILES FOLDERS    # FILES of 16-128 KiB under ROOT/data/train
    mount_workloads.py make-big ROOT MANIFEST N MIB              # N files of MIB MiB under ROOT/data/big
    mount_workloads.py walk TOP MANIFEST                         # os.walk of TOP: seconds
    mount_workloads.py epoch BUCKET MANIFEST THREADS SEED        # every file read whole, shuffled: files/s
    mount_workloads.py list ENDPOINT MANIFEST PREFIX             # boto3's paginated LIST: seconds
    mount_workloads.py gets ENDPOINT MANIFEST THREADS SEED       # whole-object GETs, shuffled: files/s
    mount_workloads.py warm ENDPOINT MANIFEST PREFIX THREADS     # the store's LIST and GET paths run: keys read
    mount_workloads.py loader BUCKET MANIFEST WORKERS BATCH SEED # a PyTorch DataLoader over the paths: files/s
    mount_workloads.py sequential BUCKET MANIFEST                # the files read one after another: MiB/s
    mount_workloads.py checkpoint PATH MIB STORE_FILE TIMEOUT    # write, fsync, close: "wait_s in_store_s"
    mount_workloads.py upload ENDPOINT KEY PATH STORE_FILE       # boto3 upload_file of PATH: seconds
    mount_workloads.py table RESULTS                             # the Markdown table and the targets

BUCKET is the folder a mount shows the bucket `data` as; a MANIFEST maps each key (relative to the bucket) to the
CRC32 of its bytes, and every read is checked against it (a mismatch ends the run with the key named). Keys are
opened by path from the manifest, never found by listing, except by `walk` and `list`. RESULTS holds lines
`ROW<TAB>COLUMN<TAB>VALUE` (bench-mount-peers appends them), from which `table` prints what was measured.
"""

import json
import os
import random
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

BUCKET = "data"
CHUNK = 4 << 20


def fail(message):
    raise SystemExit(f"bench-mount-peers: {message}")


def load(manifest):
    with open(manifest) as f:
        return json.load(f)


def save(manifest, crc):
    with open(manifest, "w") as f:
        json.dump(crc, f)


def shuffled(keys, seed):
    order = sorted(keys)
    random.Random(seed).shuffle(order)
    return order


def check(key, data, crc):
    if zlib.crc32(data) != crc[key]:
        fail(f"the bytes read for {key} differ from those written.")
    return len(data)


# --- data sets ------------------------------------------------------------------------------------------------

def make_small(root, manifest, files, folders):
    """FILES files of 16-128 KiB (seeded) spread over FOLDERS folders of data/train."""
    rng = random.Random(27)
    crc = {}
    for i in range(files):
        key = f"train/d{i % folders:03d}/f{i:06d}.bin"
        data = rng.randbytes(rng.randint(16 << 10, 128 << 10))
        path = os.path.join(root, BUCKET, key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        crc[key] = zlib.crc32(data)
    save(manifest, crc)


def make_big(root, manifest, n, mib):
    """N files of MIB MiB of random bytes in data/big."""
    crc = {}
    os.makedirs(os.path.join(root, BUCKET, "big"), exist_ok=True)
    for i in range(n):
        key = f"big/b{i:03d}.bin"
        c = 0
        with open(os.path.join(root, BUCKET, key), "wb") as f:
            for _ in range(mib * (1 << 20) // CHUNK):
                data = os.urandom(CHUNK)
                c = zlib.crc32(data, c)
                f.write(data)
            rest = mib * (1 << 20) % CHUNK
            data = os.urandom(rest)
            f.write(data)
            crc[key] = zlib.crc32(data, c)
    save(manifest, crc)


# --- reads through a file system ------------------------------------------------------------------------------

def walk(top, manifest):
    crc = load(manifest)
    t = time.perf_counter()
    n = sum(len(files) for _, _, files in os.walk(top))
    seconds = time.perf_counter() - t
    if n != len(crc):
        fail(f"os.walk of {top} found {n} files, {len(crc)} were written.")
    return seconds


def read_whole(path):
    with open(path, "rb") as f:
        return f.read()


def epoch(bucket, manifest, threads, seed):
    crc = load(manifest)
    order = shuffled(crc, seed)

    def read(key):
        return check(key, read_whole(os.path.join(bucket, key)), crc)

    t = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(read, order))
    return len(order) / (time.perf_counter() - t)


def sequential(bucket, manifest):
    """Each file read start to end in 4 MiB reads, one after another (in key order): MiB/s over all of them."""
    crc = load(manifest)
    total = 0
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    t = time.perf_counter()
    for key in sorted(crc):
        c = 0
        with open(os.path.join(bucket, key), "rb", buffering=0) as f:
            while n := f.readinto(buf):
                c = zlib.crc32(view[:n], c)
                total += n
        if c != crc[key]:
            fail(f"the bytes read for {key} differ from those written.")
    return total / (1 << 20) / (time.perf_counter() - t)


class PathDataset:
    """A map-style Dataset over a list of paths, as a user builds it from a file of names: each item opens its
    path (no listing), reads it whole and checks its CRC32; the sample is its size."""

    def __init__(self, bucket, crc):
        self.keys = sorted(crc)
        self.bucket = bucket
        self.crc = crc

    def __len__(self):
        return len(self.keys)

    def __getitem__(self, i):
        key = self.keys[i]
        return check(key, read_whole(os.path.join(self.bucket, key)), self.crc)


def loader(bucket, manifest, workers, batch, seed):
    import warnings

    import torch
    from torch.utils.data import DataLoader

    # the same 4 workers on every machine, whatever torch suggests for its cores
    warnings.filterwarnings("ignore", message="This DataLoader will create")

    crc = load(manifest)
    torch.manual_seed(seed)
    t = time.perf_counter()
    n = 0
    for sizes in DataLoader(PathDataset(bucket, crc), batch_size=batch, shuffle=True, num_workers=workers):
        n += len(sizes)
    seconds = time.perf_counter() - t
    if n != len(crc):
        fail(f"the DataLoader gave {n} samples, {len(crc)} were written.")
    return n / seconds


def pattern(mib):
    """The checkpoint's bytes, 4 MiB at a time: one random chunk, each copy stamped with its index (so no two
    chunks are alike), and their CRC32."""
    base = bytearray(os.urandom(CHUNK))
    chunks, c = [], 0
    for i in range(mib * (1 << 20) // CHUNK):
        base[:8] = i.to_bytes(8, "little")
        chunks.append(bytes(base))
    rest = mib * (1 << 20) % CHUNK
    if rest:
        chunks.append(os.urandom(rest))
    for chunk in chunks:
        c = zlib.crc32(chunk, c)
    return chunks, c


def file_crc(path):
    c = 0
    with open(path, "rb") as f:
        while data := f.read(CHUNK):
            c = zlib.crc32(data, c)
    return c


def wait_stored(path, size, crc, t0, timeout):
    """Seconds from t0 until PATH (an object's file in the store's folder, which the store writes by a move) holds
    SIZE bytes with CRC32 crc; None after TIMEOUT seconds."""
    while time.perf_counter() - t0 < timeout:
        try:
            if os.path.getsize(path) == size and file_crc(path) == crc:
                return time.perf_counter() - t0
        except FileNotFoundError:
            pass
        time.sleep(0.1)
    return None


def checkpoint(path, mib, store_file, timeout):
    """One file of MIB MiB written through PATH as a checkpoint is: the time the application waits (write,
    fsync, close), then the time from the first write until the object is in the store, checked (STORE_FILE '-':
    not waited for); then the file is read back through PATH and checked too."""
    chunks, crc = pattern(mib)
    t0 = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    waited = time.perf_counter() - t0
    stored = None if store_file == "-" else wait_stored(store_file, mib << 20, crc, t0, timeout)
    if file_crc(path) != crc:
        fail(f"the checkpoint read back from {path} differs from the bytes written.")
    if store_file == "-":
        return f"{waited:.3f}"
    if stored is None:
        print(f"bench-mount-peers: the checkpoint written to {path} was not in the store, whole, within "
              f"{timeout:.0f} s.", file=sys.stderr)
        return f"{waited:.3f} -"
    return f"{waited:.3f} {stored:.3f}"


# --- the store, straight -----------------------------------------------------------------------------------------

def s3(endpoint, threads):
    """A boto3 client for the store. Checksums on requests only when required: boto3's default (a CRC32 trailer
    on every upload, aws-chunked) makes its uploads to `ferry store` about 8x slower (18 against 148 MiB/s for
    256 MiB in 8 MiB parts, 2026-12-05), which would make a poor reference."""
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=endpoint,
                        config=Config(max_pool_connections=threads * 2, retries={"max_attempts": 10},
                                      request_checksum_calculation="when_required"))


def list_keys(endpoint, manifest, prefix):
    crc = load(manifest)
    client = s3(endpoint, 1)
    t = time.perf_counter()
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    n = sum(len(page.get("Contents", [])) for page in pages)
    seconds = time.perf_counter() - t
    if n != len(crc):
        fail(f"the LIST of {prefix} named {n} keys, {len(crc)} were written.")
    return seconds


def get_checked(client, keys, crc, threads):
    """Whole-object GETs of KEYS with THREADS threads, each body checked against the manifest's CRC32."""
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda key: check(key, client.get_object(Bucket=BUCKET, Key=key)["Body"].read(), crc), keys))


def gets(endpoint, manifest, threads, seed):
    crc = load(manifest)
    client = s3(endpoint, threads)
    order = shuffled(crc, seed)
    t = time.perf_counter()
    get_checked(client, order, crc, threads)
    return len(order) / (time.perf_counter() - t)


def warm(endpoint, manifest, prefix, threads, keys=500):
    """The store's own code paths for LIST and GET run before anyone is timed (`ferry store` is a JVM: its first
    LIST pages cost it about twice what later ones do), so that each mount, and the references, meet the same
    store: two paginated LISTs of PREFIX, then GETs of up to 500 of the manifest's keys. Returns the keys read."""
    crc = load(manifest)
    for _ in range(2):
        list_keys(endpoint, manifest, prefix)
    order = shuffled(crc, 0)[:keys]
    get_checked(s3(endpoint, threads), order, crc, threads)
    return len(order)


def upload(endpoint, key, path, store_file):
    """boto3's upload_file (multipart, its default 10 threads) of PATH to KEY: seconds, the stored bytes checked."""
    client = s3(endpoint, 10)
    crc = file_crc(path)
    t = time.perf_counter()
    client.upload_file(path, BUCKET, key)
    seconds = time.perf_counter() - t
    if file_crc(store_file) != crc:
        fail(f"the object {key} uploaded with boto3 differs from {path}.")
    return seconds


# --- the table -------------------------------------------------------------------------------------------------

PEERS = ("ferry", "rclone", "s3fs")

# row id -> (workload, number format, what the reference column holds); {small}, {big}, ... come from `labels`
ROWS = [
    ("big-cold", "{big}, sequential, cold (MiB/s)", "{:,.0f}", ""),
    ("big-warm", "same, warm (MiB/s)", "{:,.0f}", ""),
    ("walk", "{small}: `os.walk`, cold (s)", "{:,.2f}", "boto3 paginated LIST"),
    ("small-cold", "same, shuffled epoch, {threads} threads, cold (files/s)", "{:,.0f}", "boto3 whole-object GETs"),
    ("small-warm", "same, warm (files/s)", "{:,.0f}", ""),
    ("loader", "PyTorch DataLoader over the same files ({workers} workers, batch {batch}), cold (files/s)",
     "{:,.0f}", ""),
    ("ckpt-wait", "{ckpt} checkpoint write: time the application waits (s)", "{:,.2f}", ""),
    ("ckpt-stored", "same: in the store, checked, after (s)", "{:,.2f}", "boto3 upload_file"),
]


def size(mib):
    return f"{mib // 1024} GiB" if mib % 1024 == 0 else f"{mib} MiB"


def labels(meta):
    m = {k: int(v) for k, v in meta.items()}
    return {"small": f"{m['files']:,} files of 16-128 KiB in {m['folders']} folders", "threads": m["threads"],
            "big": f"{m['big_files']} x {size(m['big_mib'])}", "workers": m["workers"], "batch": m["batch"],
            "ckpt": size(m["ckpt_mib"])}


def read_results(path):
    values, meta = {}, {}
    with open(path) as f:
        for line in f:
            row, column, value = line.rstrip("\n").split("\t")
            if row == "meta":
                meta[column] = value
            else:
                values[(row, column)] = None if value == "-" else float(value)
    return values, meta


def table(path):
    values, meta = read_results(path)
    peers = [p for p in PEERS if any(c == p for _, c in values)]
    columns = peers + ["reference", "local disk"]
    out = ["| workload | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for row, label, fmt, reference in ROWS:
        if not any(r == row for r, _ in values):
            continue
        cells = []
        for column in columns:
            key = (row, "local" if column == "local disk" else column)
            if key not in values:
                cells.append("—")
            elif values[key] is None:
                cells.append("not within 600 s")
            else:
                cell = fmt.format(values[key])
                cells.append(f"{cell} ({reference})" if column == "reference" else cell)
        out.append(f"| {label.format(**labels(meta))} | " + " | ".join(cells) + " |")
    print("\n".join(out))
    print()
    for line in targets(values):
        print(line)


def targets(values):
    """One line per target of issue 27 that this run measured: the ratio, and met or not met."""
    v = lambda row, column: values.get((row, column))  # noqa: E731
    lines = []

    def target(name, ratio, met, goal):
        lines.append(f"- {name}: {ratio} ({goal}): {'met' if met else 'NOT met'}")

    if v("walk", "ferry") and v("walk", "reference"):
        r = v("walk", "ferry") / v("walk", "reference")
        target("walk, ferry / paginated LIST", f"{r:.2f}x the time", r <= 1.5, "target at most 1.5x")
    if v("walk", "ferry") and v("walk", "rclone"):
        r = v("walk", "rclone") / v("walk", "ferry")
        target("walk, rclone's time / ferry's", f"{r:.2f}x", r > 1, "target above 1: ferry faster than rclone")
    if v("small-cold", "ferry") and v("small-cold", "reference"):
        r = v("small-cold", "ferry") / v("small-cold", "reference")
        target("cold small files, ferry / GETs", f"{r:.2f}x", r >= 0.9, "target at least 0.9x")
    if v("small-cold", "ferry") and v("small-cold", "rclone"):
        r = v("small-cold", "ferry") / v("small-cold", "rclone")
        target("cold small files, ferry / rclone", f"{r:.2f}x", r >= 1.2, "target at least 1.2x")
    if v("small-warm", "ferry") and v("small-warm", "rclone"):
        r = v("small-warm", "ferry") / v("small-warm", "rclone")
        target("warm small files, ferry / rclone", f"{r:.2f}x", r >= 1.5, "target at least 1.5x")
    if v("small-warm", "ferry") and v("small-warm", "local"):
        r = v("small-warm", "ferry") / v("small-warm", "local")
        target("warm small files, ferry / local disk", f"{r:.2f}x", r >= 0.9,
               "the issue on readers with no plan asks at least 0.9x")
    for row, what in (("big-cold", "big files cold"), ("big-warm", "big files warm")):
        others = [p for p in ("rclone", "s3fs") if v(row, p)]
        if v(row, "ferry") and others:
            ratios = ", ".join(f"{v(row, 'ferry') / v(row, p):.2f}x {p}" for p in others)
            met = all(v(row, "ferry") > v(row, p) for p in others)
            target(f"{what}, ferry", ratios, met, "target ahead of both")
    for row, what in (("loader", "DataLoader cold, ferry's files/s"), ("ckpt-wait", "checkpoint, ferry's wait")):
        others = [p for p in ("rclone", "s3fs") if v(row, p)]
        if v(row, "ferry") and others:
            ratios = ", ".join(f"{v(row, 'ferry') / v(row, p):.2f}x {p}'s" for p in others)
            lines.append(f"- {what}: {ratios} (no target)")
    return lines


COMMANDS = {
    "make-small": (lambda root, m, files, folders: make_small(root, m, int(files), int(folders))),
    "make-big": (lambda root, m, n, mib: make_big(root, m, int(n), int(mib))),
    "walk": (lambda top, m: f"{walk(top, m):.3f}"),
    "epoch": (lambda bucket, m, threads, seed: f"{epoch(bucket, m, int(threads), int(seed)):.1f}"),
    "list": (lambda endpoint, m, prefix: f"{list_keys(endpoint, m, prefix):.3f}"),
    "gets": (lambda endpoint, m, threads, seed: f"{gets(endpoint, m, int(threads), int(seed)):.1f}"),
    "warm": (lambda endpoint, m, prefix, threads: warm(endpoint, m, prefix, int(threads))),
    "loader": (lambda bucket, m, workers, batch, seed:
               f"{loader(bucket, m, int(workers), int(batch), int(seed)):.1f}"),
    "sequential": (lambda bucket, m: f"{sequential(bucket, m):.1f}"),
    "checkpoint": (lambda path, mib, store_file, timeout: checkpoint(path, int(mib), store_file, float(timeout))),
    "upload": (lambda endpoint, key, path, store_file: f"{upload(endpoint, key, path, store_file):.3f}"),
    "table": table,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        fail(f"mount_workloads.py needs one of {', '.join(COMMANDS)} (see its docstring).")
    result = COMMANDS[sys.argv[1]](*sys.argv[2:])
    if result is not None:
        print(result)
