#!/usr/bin/env python3
"""One rank of a training job as torchrun starts it, asking nothing of its caller: registers the job with its node's
daemon (``FerryClient()``: FERRY_ENDPOINT) from the launcher's variables, reads its epoch-1 order, and writes what it
saw to RESULTS_DIR/rank-N.json (a file per rank: the ranks of one torchrun agent share its stdout, where two lines
written at once can land on one). Not a unittest module: test_daemon_registration.py runs it under a real torchrun.

    python3 rank_main.py JOB MANIFEST_JSON_FILE SEED RESULTS_DIR
"""

import json
import os
import sys

from ferry_client import FerryClient, placement


def main():
    job, manifest = sys.argv[1], sys.argv[2]
    seed, results = int(sys.argv[3]), sys.argv[4]
    here = placement()
    with FerryClient() as client:
        answer = client.register_job(job, manifest=manifest, seed=seed, batch_size=2)
        order = client.order(job, 1, here.rank)
    result = {"url": client.url, "rank": here.rank, "node": here.node, "registration": answer["registration"],
              "ranks": answer["ranks"], "keys": sorted({s["key"] for s in order}), "samples": len(order)}
    path = os.path.join(results, f"rank-{here.rank}.json")
    with open(path + ".part", "w") as f:
        json.dump(result, f)
    os.replace(path + ".part", path)


if __name__ == "__main__":
    main()
