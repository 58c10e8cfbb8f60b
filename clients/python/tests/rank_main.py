#!/usr/bin/env python3
"""One rank of a training job as torchrun starts it, asking nothing of its caller: registers the job with its node's
daemon (``FerryClient()``: FERRY_ENDPOINT) from the launcher's variables, reads its epoch-1 order, and prints one line
``RESULT {json}``. Not a unittest module: test_daemon_registration.py runs it under a real torchrun.

    python3 rank_main.py JOB MANIFEST_JSON_FILE [SEED]
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ferry_client import FerryClient, placement  # noqa: E402


def main():
    job, manifest = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    here = placement()
    with FerryClient() as client:
        answer = client.register_job(job, manifest=manifest, seed=seed, batch_size=2)
        order = client.order(job, 1, here.rank)
    print("RESULT " + json.dumps({"url": client.url, "rank": here.rank, "node": here.node,
                                  "registration": answer["registration"], "ranks": answer["ranks"],
                                  "keys": sorted({s["key"] for s in order}), "samples": len(order)}), flush=True)


if __name__ == "__main__":
    main()
