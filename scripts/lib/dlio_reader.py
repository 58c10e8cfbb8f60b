#!/usr/bin/env python3
"""A training job's reads and computes, emulated the way MLPerf Storage's DLIO emulates them (issue 23).

Two commands:

  dlio_reader.py make SHAPE DIR MANIFEST --files N [--seed S]
      Writes N files of the shape under DIR and a JSON manifest {relative path: [size, crc32]} of the bytes
      written (what every read is checked against). unet3d: npz files of 6-38 MB (a real zip, stored, holding
      one uint8 array `x`, as np.savez writes it: np.load reads them). images: 100-200 KiB files of random
      bytes in 100 class folders (an ImageFolder's layout).

  dlio_reader.py epoch MANIFEST --root DIR | --endpoint URL --bucket B [--prefix P]
                       --threads T --batch B --compute C [--prefetch-size P] [--seed S] [--walk] [--label L]
      One epoch over the manifest's files in a shuffled order (seed S), as DLIO's PyTorch data loader runs it:
      T reader threads (workers), each building whole batches of B files, ceil(P / T) batches a worker ahead
      (DLIO's prefetch_size P, default 2, becomes PyTorch's prefetch_factor that way), delivered in order; the main thread waits for each batch, then "computes"
      for C seconds (a sleep: the emulated accelerator). A file under --root is read as numpy's np.load reads
      an npz: the zip's end record first (the last 22 bytes), then the last 64 KiB (the central directory),
      then the whole file from the start. With --endpoint, each file is one whole-object GET with boto3 (the
      store's line rate, the cold reference). --walk: the tree under --root is listed first (os.walk), as DLIO
      and PyTorch's ImageFolder list their data folder before the first epoch; not timed with the epoch, reported
      as walk_s. Prints one JSON object:
        au        accelerator utilization: compute time / wall time over the steps, the first step excluded
                  (as MLPerf Storage reports it);
        mbps, fps MB/s (10^6 bytes) and files/s over the whole epoch, from the first read to the last step's end;
        max_wait  the longest wait for a batch (s), the first step excluded; wait_first: the first step's;
        plus steps, files, bytes, wall.
      A file whose bytes differ from the manifest's CRC32 fails the run (exit 1).

The last batch may be short (the epoch reads every file); it is a step like the others.
"""
import argparse
import json
import os
import queue
import random
import struct
import sys
import threading
import time
import zipfile
import zlib

TAIL = 64 << 10  # what a zip reader reads past the end record to find the central directory
END_RECORD = 22


def die(message):
    print(f"dlio_reader: {message}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------------------------- data


def npy_bytes(payload):
    """A .npy file (format 1.0) of a 1-D uint8 array holding payload, as np.save writes it."""
    header = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % len(payload)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + payload


def make(shape, root, manifest, files, seed):
    rng = random.Random(seed)
    out = {}
    for i in range(files):
        if shape == "unet3d":
            rel = f"train/img_{i:05d}.npz"
            size = rng.randint(6_000_000, 38_000_000)
        else:
            rel = f"train/c{i % 100:03d}/img_{i:06d}.bin"
            size = rng.randint(100 << 10, 200 << 10)
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if shape == "unet3d":
            with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
                z.writestr("x.npy", npy_bytes(rng.randbytes(size)))
            with open(path, "rb") as f:
                data = f.read()
        else:
            data = rng.randbytes(size)
            with open(path, "wb") as f:
                f.write(data)
        out[rel] = [len(data), zlib.crc32(data)]
    with open(manifest, "w") as f:
        json.dump(out, f)
    print(f"{files} files, {sum(s for s, _ in out.values()) / 1e6:.0f} MB", file=sys.stderr)


# ---------------------------------------------------------------------------------------------- readers


def file_reader(root):
    def read(rel, size):
        fd = os.open(os.path.join(root, rel), os.O_RDONLY)
        try:
            # np.load: zipfile finds the end record, then the central directory before it ...
            end = os.pread(fd, END_RECORD, max(0, size - END_RECORD))
            tail = os.pread(fd, TAIL, max(0, size - TAIL))
            # ... then reads the member from its local header: the file from the start
            with os.fdopen(os.dup(fd), "rb", buffering=0) as f:
                data = f.readall()
        finally:
            os.close(fd)
        if not data.endswith(tail) or not data.endswith(end):
            raise ValueError(f"the tail read differs from the end of the whole read: {rel}")
        return data
    return read


def s3_reader(endpoint, bucket, prefix, threads):
    import boto3
    from botocore.config import Config
    s3 = boto3.client("s3", endpoint_url=endpoint,
                      config=Config(max_pool_connections=threads * 2, retries={"max_attempts": 10}))

    def read(rel, size):
        return s3.get_object(Bucket=bucket, Key=prefix + rel)["Body"].read()
    return read


# ---------------------------------------------------------------------------------------------- the epoch


def epoch(manifest, read, threads, batch, compute, seed, prefetch_size):
    files = sorted(manifest)
    random.Random(seed).shuffle(files)
    batches = [files[i:i + batch] for i in range(0, len(files), batch)]
    ahead = threads * max(1, -(-prefetch_size // threads))  # DLIO: prefetch_factor = ceil(prefetch_size / read_threads)
    tasks = queue.Queue()
    done = {}
    cond = threading.Condition()
    failure = []

    def worker():
        while True:
            k = tasks.get()
            if k is None:
                return
            n = 0
            try:
                for rel in batches[k]:
                    size, crc = manifest[rel]
                    data = read(rel, size)
                    if len(data) != size or zlib.crc32(data) != crc:
                        raise ValueError(f"bytes differ from the ones written: {rel} ({len(data)} bytes read, {size} written)")
                    n += len(data)
            except Exception as e:  # the run fails; the main thread reports it
                failure.append(f"{type(e).__name__}: {e}")
            with cond:
                done[k] = n
                cond.notify_all()

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    start = time.perf_counter()
    for t in pool:
        t.start()
    submitted = 0
    while submitted < min(ahead, len(batches)):
        tasks.put(submitted)
        submitted += 1
    waits, step_ends, total = [], [], 0
    for k in range(len(batches)):
        t0 = time.perf_counter()
        with cond:
            while k not in done:
                cond.wait()
            total += done.pop(k)
        waits.append(time.perf_counter() - t0)
        if failure:
            die(failure[0])
        if submitted < len(batches):
            tasks.put(submitted)
            submitted += 1
        time.sleep(compute)
        step_ends.append(time.perf_counter())
    for _ in pool:
        tasks.put(None)
    wall = step_ends[-1] - start
    steps = len(batches)
    # MLPerf Storage's AU: compute over wall time, the first step (the pipeline filling) excluded
    if steps > 1 and compute > 0:
        span = step_ends[-1] - step_ends[0]
        au = compute * (steps - 1) / span if span > 0 else 1.0
        max_wait = max(waits[1:])
    elif steps > 1:
        au, max_wait = None, max(waits[1:])  # no compute: no accelerator to utilize
    else:
        au, max_wait = None, None
    return {"steps": steps, "files": len(files), "bytes": total, "wall": round(wall, 3),
            "au": None if au is None else round(au, 4), "mbps": round(total / wall / 1e6, 1),
            "fps": round(len(files) / wall, 1), "max_wait": None if max_wait is None else round(max_wait, 3),
            "wait_first": round(waits[0], 3), "threads": threads, "batch": batch, "compute": compute, "in_flight": ahead}


def walk(root, manifest):
    """Lists the tree under root as a loader does at start; fails unless it names exactly the manifest's files."""
    t = time.perf_counter()
    found = {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}
    elapsed = time.perf_counter() - t
    if found != set(manifest):
        die(f"listing {root} found {len(found)} files, {len(found & set(manifest))} of the {len(manifest)} written.")
    return round(elapsed, 3)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("shape", choices=["unet3d", "images"])
    m.add_argument("root")
    m.add_argument("manifest")
    m.add_argument("--files", type=int, required=True)
    m.add_argument("--seed", type=int, default=23)
    e = sub.add_parser("epoch")
    e.add_argument("manifest")
    e.add_argument("--root")
    e.add_argument("--endpoint")
    e.add_argument("--bucket")
    e.add_argument("--prefix", default="")
    e.add_argument("--threads", type=int, required=True)
    e.add_argument("--batch", type=int, required=True)
    e.add_argument("--compute", type=float, required=True)
    e.add_argument("--prefetch-size", type=int, default=2)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--walk", action="store_true")
    e.add_argument("--label", default="")
    a = p.parse_args()
    if a.command == "make":
        if a.files < 1:
            die(f"--files must be at least 1: {a.files}")
        make(a.shape, a.root, a.manifest, a.files, a.seed)
        return
    if (a.root is None) == (a.endpoint is None) or (a.endpoint is not None and not a.bucket):
        die("give either --root DIR or --endpoint URL with --bucket NAME.")
    if a.threads < 1 or a.batch < 1 or a.compute < 0 or a.prefetch_size < 0:
        die(f"--threads and --batch must be at least 1, --compute and --prefetch-size not negative: "
            f"{a.threads}, {a.batch}, {a.compute}, {a.prefetch_size}")
    with open(a.manifest) as f:
        manifest = json.load(f)
    walk_s = walk(a.root, manifest) if a.walk and a.root else None
    read = file_reader(a.root) if a.root else s3_reader(a.endpoint, a.bucket, a.prefix, a.threads)
    result = epoch(manifest, read, a.threads, a.batch, a.compute, a.seed, a.prefetch_size)
    result["label"] = a.label
    result["walk_s"] = walk_s
    print(json.dumps(result))


if __name__ == "__main__":
    main()
