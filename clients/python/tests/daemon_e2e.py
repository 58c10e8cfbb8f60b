#!/usr/bin/env python3
"""End to end against a live ferry daemon: one epoch of one rank through a real PyTorch DataLoader.

    python3 clients/python/tests/daemon_e2e.py --url URL --bucket B --manifest-key K --job J [--no-torch]

Registers the job from the manifest at ``B/K`` in the daemon's store, reads one epoch of ``--rank`` with
``DataLoader(FerryIterableDataset(...), batch_size=--batch-size, num_workers=--workers)`` (or, with
``--no-torch``, with one ``Samples`` per worker taken batch by batch round robin, as DataLoader does),
reports the waits with StepReporter, and checks that it received every sample of the rank's order
(``order(job, epoch, rank)`` with one worker) exactly once, in that order, with the bytes a direct
ranged GET returns (after the epoch; ``--no-verify-bytes`` skips those reads). Prints one JSON line
``{"samples": N, "steps": S}`` and exits 0; on any mismatch it says what differed on stderr and exits 1
(2 when the daemon answers with an error).

Not a unittest module (its name does not start with ``test``): the Java integration test runs it.
"""

import argparse
import collections
import hashlib
import itertools
import json
import math
import os
import sys
import time
import warnings

from ferry_client import FerryClient, FerryError, Samples, StepReporter


class Mismatch(Exception):
    """What the loader delivered differs from the rank's order."""


def identity(sample):
    """A sample's identity within an epoch: its index when the daemon gives one, else where its bytes are."""
    index = sample.get("index")
    if index is not None and index >= 0:
        return ("index", int(index))
    return ("span", sample.get("bucket"), sample.get("key"), sample.get("offset") or 0, sample.get("length"))


def describe(sample):
    where = f"{sample.get('bucket')}/{sample.get('key')}@{sample.get('offset', 0)}+{sample.get('length')}"
    return f"sample {sample.get('index')} ({where})"


def read_with_torch(args, reporter):
    """One epoch through torch's DataLoader: returns [(meta, data)] in the order it yielded them, and the steps."""
    from torch.utils.data import DataLoader

    from ferry_client.torch import FerryIterableDataset

    # DataLoader warns when num_workers exceeds the cores; on a small CI machine that is expected.
    warnings.filterwarnings("ignore", message="This DataLoader will create")

    dataset = FerryIterableDataset(args.url, args.job, epoch=args.epoch, rank=args.rank, with_sample=True,
                                   access_key=args.access_key, secret_key=args.secret_key)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers)
    received, steps = [], 0
    it = iter(loader)
    while True:
        try:
            with reporter.wait() as step:
                meta, datas = next(it)
                step.samples = len(datas)
        except StopIteration:
            break
        steps += 1
        for i, data in enumerate(datas):
            received.append(({k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in meta.items()}, data))
    return received, steps


def read_without_torch(args, client, reporter):
    """One epoch without torch: one Samples per worker, taken a batch at a time round robin, skipping
    workers that ran out, exactly as DataLoader consumes an IterableDataset's workers."""
    iterators = [iter(Samples(client, args.job, args.epoch, args.rank, worker=w, workers=args.workers, meta=True))
                 for w in range(args.workers)]
    live = collections.deque(range(args.workers))
    received, steps = [], 0
    while live:
        worker = live.popleft()
        started = time.monotonic()
        batch = list(itertools.islice(iterators[worker], args.batch_size))
        if len(batch) == args.batch_size:
            live.append(worker)
        if batch:
            reporter.step((time.monotonic() - started) * 1000.0, samples=len(batch))
            steps += 1
            received.extend(batch)
    return received, steps


def check(expected, received, steps, batch_size, client, verify_bytes=True):
    """Raises Mismatch with the first difference between the rank's order and what the loader yielded."""
    want = [identity(s) for s in expected]
    got = [identity(meta) for meta, _ in received]
    if want != got:
        counts = collections.Counter(got)
        duplicated = [k for k, n in counts.items() if n > collections.Counter(want)[k]]
        missing = [k for k in collections.Counter(want) - counts]
        first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
        at = (f"at position {first} the order has {describe(expected[first]) if first < len(expected) else 'nothing'}"
              f" but the loader yielded {describe(received[first][0]) if first < len(received) else 'nothing'}")
        raise Mismatch(f"the loader yielded {len(got)} samples, the rank's order has {len(want)}; "
                       f"{len(missing)} missing, {len(duplicated)} repeated; {at}.")
    for position, (sample, (_meta, data)) in enumerate(zip(expected, received)):
        length = sample.get("length")
        if length is not None and len(data) != length:
            raise Mismatch(f"{describe(sample)} at position {position} has {len(data)} bytes, not {length}.")
        if not verify_bytes:
            continue
        direct = client.get(sample["bucket"], sample["key"], sample.get("offset"), length, sample.get("etag"))
        if hashlib.sha256(data).digest() != hashlib.sha256(direct).digest():
            raise Mismatch(f"{describe(sample)} at position {position} differs from a direct ranged GET of it.")
    if steps != math.ceil(len(expected) / batch_size):
        raise Mismatch(f"{steps} steps for {len(expected)} samples in batches of {batch_size}: the workers' "
                       f"batches were not whole (is the job's batch_size {batch_size}?).")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("FERRY_URL", "http://127.0.0.1:9099"))
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--manifest-key", required=True, help="the manifest's key in --bucket")
    parser.add_argument("--job", required=True)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--workers", type=int, default=4, help="DataLoader workers (num_workers)")
    parser.add_argument("--ranks", type=int, default=1, help="ranks per node of the job's world")
    parser.add_argument("--nodes", type=int, default=1, help="nodes of the job's world (this process reads --rank)")
    parser.add_argument("--partition", default=None, help="node, global or auto (the daemon's default)")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--epoch", type=int, default=1, help="epochs count from 1")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-torch", action="store_true", help="read with Samples directly, without PyTorch")
    parser.add_argument("--no-verify-bytes", action="store_true",
                        help="skip the direct ranged GET of every sample after the epoch (those reads count in "
                             "the daemon's hit rate and egress)")
    parser.add_argument("--access-key", default=None, help="default: FERRY_ACCESS_KEY")
    parser.add_argument("--secret-key", default=None, help="default: FERRY_SECRET_KEY")
    args = parser.parse_args(argv)

    def fail(code, message):
        print(f"daemon_e2e: FAIL: {message}", file=sys.stderr)
        return code

    client = FerryClient(args.url, args.access_key, args.secret_key)
    try:
        job = client.register_job(args.job, manifest_key=f"{args.bucket}/{args.manifest_key}", seed=args.seed,
                                  world=(args.nodes, args.ranks, args.workers), node=args.rank // args.ranks,
                                  batch_size=args.batch_size, partition=args.partition)
        print(f"daemon_e2e: registered {json.dumps(job)}", file=sys.stderr)
        expected = client.order(args.job, args.epoch, args.rank)
        if not expected:
            return fail(1, f"the daemon's order for rank {args.rank} of epoch {args.epoch} is empty.")
        reporter = StepReporter(client, args.job, args.rank, epoch=args.epoch, batch_size=args.batch_size,
                                ranks=int(job.get("ranks", args.ranks * args.nodes)))
        if args.no_torch:
            received, steps = read_without_torch(args, client, reporter)
        else:
            received, steps = read_with_torch(args, reporter)
        reporter.close()  # raises if the daemon refused the progress report
        check(expected, received, steps, args.batch_size, client, verify_bytes=not args.no_verify_bytes)
    except Mismatch as e:
        return fail(1, str(e))
    except FerryError as e:
        return fail(2, f"the daemon answered with an error: {e}")
    finally:
        client.close()
    print(json.dumps({"samples": len(received), "steps": steps, "advice": reporter.advice}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
