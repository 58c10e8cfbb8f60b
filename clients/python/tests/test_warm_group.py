"""``ferry warm --group``: every member of a group of two real daemons loads the objects it owns, so the prefix
crosses from the store once, the two tiers hold it between them without overlap, and a read of all of it through
either member afterwards fetches nothing from the store. Without a group, one sentence and exit 1. ``ferry warm --job``:
a registered job's epoch, loaded in its order, is then read all from the tier."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
import urllib.request

from ferry_client import FerryClient, StepReporter
from ferry_client.loader import Samples

import support

OBJECTS, SIZE = 48, 256 * 1024


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=10) as r:
        return json.load(r)


def egress(daemon):
    return get(daemon.url, "/_ferry/v1/status")["tiers"]["origin"]["egress_bytes"]


def held(daemon):
    """The objects of data/train/ the daemon's tier holds (one level: the objects themselves)."""
    listing = get(daemon.url, "/_ferry/v1/cache?bucket=data&prefix=train/")
    return {e["prefix"] for e in listing["entries"]}


class WarmGroupTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ferry-warm-group-")
        store = os.path.join(cls.dir, "store")
        os.makedirs(os.path.join(store, "data", "train"))
        for i in range(OBJECTS):
            with open(os.path.join(store, "data", "train", f"s{i:03d}.bin"), "wb") as f:
                f.write(bytes([i]) * SIZE)
        ports = [support.free_port(), support.free_port()]
        members = ",".join(f"http://127.0.0.1:{p}" for p in ports)
        cls.daemons = []
        try:
            for n, port in enumerate(ports):
                cls.daemons.append(support.FerryDaemon(
                    store, os.path.join(cls.dir, f"cache{n}"), "--group", members,
                    "--self", f"http://127.0.0.1:{port}", port=port))
            cls.alone = support.FerryDaemon(store, os.path.join(cls.dir, "cache-alone"))
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for d in [*cls.daemons, *([cls.alone] if hasattr(cls, "alone") else [])]:
            d.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def ferry(self, *args):
        return subprocess.run([os.path.join(support.REPO_ROOT, "ferry"), *args], capture_output=True, text=True,
                              timeout=600, check=False)

    def test_each_member_loads_what_it_owns_and_the_prefix_crosses_once(self):
        first, second = self.daemons
        before = egress(first) + egress(second)
        r = self.ferry("warm", "s3://data/train/", "--group", "--url", first.url)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("on 2 members", r.stdout)
        self.assertEqual(egress(first) + egress(second) - before, OBJECTS * SIZE, "the prefix crossed from the store once")
        a, b = held(first), held(second)
        self.assertTrue(a and b, f"both members own a share: {len(a)} and {len(b)}")
        self.assertFalse(a & b, "no object is on both")
        self.assertEqual(len(a | b), OBJECTS)

        # warming again fetches nothing; reading it all through either member fetches nothing from the store
        again = self.ferry("warm", "s3://data/train/", "--group", "--url", second.url)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)
        settled = egress(first) + egress(second)
        self.assertEqual(settled - before, OBJECTS * SIZE)
        client = FerryClient(first.url)
        for i in range(OBJECTS):
            self.assertEqual(client.get("data", f"train/s{i:03d}.bin"), bytes([i]) * SIZE)
        self.assertEqual(egress(first) + egress(second), settled, "the first epoch read from the members, not the store")

    def test_a_jobs_epoch_warmed_in_its_order_is_then_read_from_the_tier(self):
        daemon = self.alone
        keys = [f"data/train/s{i:03d}.bin" for i in range(0, OBJECTS, 2)]   # half the prefix, in the job's order
        with FerryClient(daemon.url) as client:
            client.register_job("warmed", ranks=[list(reversed(keys))], batch_size=1)
            r = self.ferry("warm", "--job", "warmed", "--epoch", "1", "--url", daemon.url)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("job warmed epoch 1", r.stdout)
            self.assertIn(f"{len(keys)} blocks", r.stdout)    # one 1 MiB block per object of 256 KiB
            before = egress(daemon)
            with StepReporter(client, "warmed", 0, epoch=1, batch_size=1, ranks=1) as steps:
                for _ in Samples(client, "warmed", epoch=1):
                    steps.step(0.0)
            self.assertEqual(egress(daemon), before, "the epoch came from the tier")
            (row,) = [j for j in client.status()["jobs"] if j["job"] == "warmed"]
            (first,) = [e for e in row["epochs"] if e["epoch"] == 1]
            # fetched for this epoch before it was read: the job's row counts it as prefetched (ahead of the reads,
            # the epoch's egress), and no read waited for the store
            self.assertEqual(first["waited_bytes"], 0, first)
            self.assertEqual(first["prefetched_share_bytes"] + first["local_hit_rate_bytes"], 1.0, first)
            self.assertEqual(first["egress_bytes"], len(keys) * SIZE, first)
        self.assertEqual(held(daemon), {k.removeprefix("data/") for k in keys})
        bad = self.ferry("warm", "--job", "nobody", "--url", daemon.url)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("no job nobody is registered", bad.stderr)

    def test_a_group_warm_of_a_daemon_in_no_group_is_one_sentence(self):
        r = self.ferry("warm", "s3://data/train/", "--group", "--url", self.alone.url)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("is in no group", r.stderr)


if __name__ == "__main__":
    unittest.main()
