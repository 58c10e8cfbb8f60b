#!/usr/bin/env python3
"""Runs epochs of a registered job through a live ferry daemon as a training loop would, and says what the
consumer measured by its own clock: the other side of the daemon's four numbers.

    python3 clients/python/tests/four_numbers_e2e.py --url URL --job J --manifest-key B/K|--manifest-file F --epochs 1,2
        [--reader torch|boto3] [--workers N] [--batch-size B] [--decode-ms MS] [--step-ms MS] [--prefetch N]

Registers the job (its manifest in the store or sent along, seed 7; ``--register-only`` stops there), then for each epoch of
``--epochs`` reads rank 0's samples in plan order: with ``--reader torch`` through
``DataLoader(FerryIterableDataset(...), num_workers=--workers)``, whose ``decode`` burns ``--decode-ms`` of CPU
per sample (a decode that costs CPU, not a sleep); with ``--reader boto3``, by plain ranged ``get_object`` calls
of boto3 in plan order (what a user of the plan who reads with boto3 does). Each batch is followed by
``--step-ms`` of training (a sleep: the accelerator's step). Waits are reported with ``StepReporter.timed``.

Prints one JSON line per epoch, ``{"epoch", "samples", "steps", "seconds"}``, where seconds is the consumer's
own time from asking for the first batch to the end of the last step, and a last line ``{"advice": [...]}`` with
the daemon's findings as the reporter last heard them. Exits 1 when an epoch delivered a sample count other
than the plan's.

Not a unittest module (its name does not start with ``test``): the Java integration tests run it.
"""

import argparse
import json
import sys
import time
import warnings

from ferry_client import FerryClient, StepReporter


def burn(ms):
    """Spends ``ms`` of this process's CPU time (a decode that costs CPU)."""
    end = time.process_time() + ms / 1000.0
    x = 0
    while time.process_time() < end:
        for i in range(200):
            x += i * i
    return x


class Decode:
    """A picklable decode for DataLoader workers: burns CPU, returns the sample's length."""

    def __init__(self, ms):
        self.ms = ms

    def __call__(self, data):
        if self.ms > 0:
            burn(self.ms)
        return len(data)


def torch_batches(args, epoch):
    from torch.utils.data import DataLoader

    from ferry_client.torch import FerryIterableDataset

    warnings.filterwarnings("ignore", message="This DataLoader will create")
    dataset = FerryIterableDataset(args.url, args.job, epoch=epoch, rank=0, decode=Decode(args.decode_ms),
                                   prefetch=args.prefetch, access_key="ferry", secret_key="ferry")
    return DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers, collate_fn=lambda b: b)


def boto3_batches(args, client, epoch):
    """Plan order by boto3: the rank's samples, read one by one with ranged GETs, in batches."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=args.url, aws_access_key_id="ferry", aws_secret_access_key="ferry",
                      region_name="us-east-1")
    order = client.order(args.job, epoch=epoch, rank=0)
    batch = []
    for sample in order:
        offset, length = sample.get("offset") or 0, sample["length"]
        body = s3.get_object(Bucket=sample["bucket"], Key=sample["key"],
                             Range=f"bytes={offset}-{offset + length - 1}")["Body"].read()
        batch.append(Decode(args.decode_ms)(body))
        if len(batch) == args.batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--job", required=True)
    parser.add_argument("--manifest-key", help="bucket/key of the manifest in the daemon's store")
    parser.add_argument("--manifest-file", help="the manifest file itself (sent with the registration)")
    parser.add_argument("--epochs", default="1", help="comma-separated epochs to run, from 1")
    parser.add_argument("--register-only", action="store_true")
    parser.add_argument("--reader", choices=("torch", "boto3"), default="torch")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--decode-ms", type=float, default=0.0, help="CPU burned decoding each sample")
    parser.add_argument("--step-ms", type=float, default=0.0, help="the training step after each batch")
    parser.add_argument("--prefetch", type=int, default=8, help="the dataset's requests ahead per worker")
    args = parser.parse_args(argv)

    client = FerryClient(args.url, access_key="ferry", secret_key="ferry")
    if (args.manifest_key is None) == (args.manifest_file is None):
        parser.error("give one of --manifest-key and --manifest-file")
    job = client.register_job(args.job, manifest=args.manifest_file, manifest_key=args.manifest_key, seed=7,
                              batch_size=args.batch_size)
    if args.register_only:
        print(json.dumps({"registered": job["registration"], "samples": job["samples"]}), flush=True)
        return 0
    expected = job["samples"]
    advice = []
    for epoch in [int(e) for e in args.epochs.split(",")]:
        with StepReporter(client, args.job, 0, epoch=epoch, batch_size=args.batch_size, ranks=job["ranks"]) as reporter:
            batches = torch_batches(args, epoch) if args.reader == "torch" else boto3_batches(args, client, epoch)
            samples = steps = 0
            started = time.monotonic()
            for batch in reporter.timed(batches, count=len):
                samples += len(batch)
                steps += 1
                if args.step_ms > 0:
                    time.sleep(args.step_ms / 1000.0)
            seconds = time.monotonic() - started
        advice = reporter.advice
        print(json.dumps({"epoch": epoch, "samples": samples, "steps": steps, "seconds": seconds}), flush=True)
        if samples != expected:
            print(f"epoch {epoch} delivered {samples} samples, the plan has {expected}", file=sys.stderr)
            return 1
    print(json.dumps({"advice": advice}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
