"""A loader of a job registered with a ferry daemon, reading its samples as files of a ferry mount.

Registers the job (ferry_client's register_job), waits until the daemon has prefetched PREFETCH bytes
of the plan, then reads each epoch's order through the mount (open, seek, read) in plan
order, checks every sample byte for byte against the store's own file, and reports progress each
batch, as a training loop would. Prints one JSON line: the registration's predicted egress and the
samples read per epoch.
"""
import json
import sys
import time

from ferry_client import FerryClient

url, job, manifest, mountpoint, store, epochs, batch, prefetch = sys.argv[1:9]
epochs, batch, prefetch = int(epochs), int(batch), int(prefetch)

client = FerryClient(url)
answer = client.register_job(job, manifest=manifest, seed=3, batch_size=batch)
deadline = time.monotonic() + 30
while client.status()["tiers"]["local"]["prefetched_bytes"] < prefetch:
    if time.monotonic() > deadline:
        sys.exit("the daemon did not prefetch %d bytes within 30 s" % prefetch)
    time.sleep(0.05)

read = []
for epoch in range(1, epochs + 1):
    order = client.order(job, epoch, 0)
    position = 0
    for start in range(0, len(order), batch):
        t0 = time.monotonic()
        for s in order[start:start + batch]:
            with open("%s/%s/%s" % (mountpoint, s["bucket"], s["key"]), "rb") as f:
                f.seek(s["offset"])
                got = f.read(s["length"])
            with open("%s/%s/%s" % (store, s["bucket"], s["key"]), "rb") as f:
                f.seek(s["offset"])
                want = f.read(s["length"])
            if got != want:
                sys.exit("sample %d (%s at %d) differs from the store" % (s["index"], s["key"], s["offset"]))
        wait_ms = (time.monotonic() - t0) * 1000
        n = len(order[start:start + batch])
        position += n
        client.report(job, 0, epoch, position, n, [wait_ms])
    read.append(position)
print(json.dumps({"predicted_egress_bytes": answer.get("predicted_egress_bytes"), "samples": read}))
