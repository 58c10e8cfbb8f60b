"""A job resumed on another world with its checkpoint, against real ``ferry serve`` daemons.

Four daemons stand for four nodes' daemons, the job registered with 12 canonical nodes. Halfway through epoch 2
(inside a round of the order) the job saves ``FerryClient.checkpoint``; the last node leaves, and the three left
register again with ``resume=`` that checkpoint and ``replace=True``, then read on from its position. Only the
departed node's three canonical nodes move (``c mod 3`` would move nine), and every sample of the epoch is read
exactly once, but the new world's padding.
"""

import json
import os
import shutil
import tempfile
import unittest

from ferry_client import FerryClient, FerryError

import support

SHARDS = 12
SAMPLES_PER_SHARD = 8
SAMPLE_BYTES = 1024


class ResumeHomesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ferry-resume-")
        store = os.path.join(cls.dir, "store")
        os.makedirs(os.path.join(store, "data"))
        for i in range(SHARDS):
            with open(os.path.join(store, "data", f"shard-{i:02d}.bin"), "wb") as f:
                f.write(bytes([i]) * (SAMPLES_PER_SHARD * SAMPLE_BYTES))
        cls.daemons = []
        try:
            for node in range(4):
                cls.daemons.append(support.FerryDaemon(store, os.path.join(cls.dir, f"cache-{node}"), "--prefetch-bytes", "0"))
        except BaseException:
            cls.tearDownClass()
            raise
        with FerryClient(cls.daemons[0].url) as client:
            shards = []
            for i in range(SHARDS):
                head = client.head("data", f"shard-{i:02d}.bin")
                shards.append({"bucket": "data", "key": f"shard-{i:02d}.bin", "size": head["size"],
                               "etag": head["etag"].strip('"'), "samples": SAMPLES_PER_SHARD})
        cls.manifest = os.path.join(cls.dir, "manifest.json")
        with open(cls.manifest, "w") as f:
            json.dump({"format": "ferry-manifest/1", "source": "test", "shards": shards}, f)

    @classmethod
    def tearDownClass(cls):
        for daemon in cls.daemons:
            daemon.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def read(self, clients, epoch, start, steps, seen):
        for rank, client in enumerate(clients):
            for sample in client.order("resumed", epoch, rank, start=start)[:steps]:
                data = client.get(sample["bucket"], sample["key"], sample["offset"], sample["length"], sample["etag"])
                self.assertEqual(len(data), sample["length"])
                seen[sample["index"]] = seen.get(sample["index"], 0) + 1

    def test_four_to_three_with_the_checkpoint_moves_only_the_departed_share_exactly(self):
        clients = [FerryClient(d.url) for d in self.daemons]
        try:
            for node, client in enumerate(clients):
                answer = client.register_job("resumed", manifest=self.manifest, seed=5, world=(4, 1, 1), node=node,
                                             partition="node", canonical_nodes=12)
                self.assertEqual(answer["homes"], {"nodes": 4, "node_of": [0, 1, 2, 3] * 3})
            samples = SHARDS * SAMPLES_PER_SHARD
            half = samples // 4 // 2 + 1  # 13 steps of 4: position 52, inside the round of positions 48 to 59
            seen = {}
            self.read(clients, 2, 0, half, seen)
            saved = json.loads(json.dumps(clients[0].checkpoint("resumed", 2, half * 4)))  # as saved beside the model
            self.assertEqual(saved["position"], 52)
            self.assertEqual(saved["canonical_nodes"], 12)

            self.daemons[3].stop()  # the last node leaves
            for node in range(3):
                answer = clients[node].register_job("resumed", manifest=self.manifest, seed=5, world=(3, 1, 1), node=node,
                                                    partition="node", resume=saved, replace=True)
                self.assertEqual(answer["registration"], "replaced")
                self.assertEqual(answer["moved_canonical_nodes"], 3)
                self.assertEqual(answer["homes"]["node_of"], [0, 1, 2, 0, 0, 1, 2, 1, 0, 1, 2, 2])
            self.read(clients[:3], 2, saved["position"], samples, seen)
            self.assertEqual(sorted(seen), list(range(samples)), "every sample of epoch 2 read")
            padding = -(samples - 52) % 3
            self.assertEqual(sum(seen.values()) - samples, padding, "no sample read twice but the padding")

            # the checkpoint of a later round carries the new world's homes, for the next change
            later = clients[0].checkpoint("resumed", 2, 90)
            self.assertEqual(later["round_homes"], later["homes"])
            self.assertEqual(later["homes"]["nodes"], 3)
            with self.assertRaises(FerryError) as e:
                clients[0].register_job("resumed", manifest=self.manifest, seed=5, world=(3, 1, 1), node=0, partition="node",
                                        resume={"homes": {"nodes": 3, "node_of": [0, 1, 2, 3]}}, replace=True)
            self.assertEqual(e.exception.status, 400)
            self.assertIn("resume.homes.node_of[3] is 3 but resume.homes.nodes is 3", str(e.exception))
        finally:
            for client in clients:
                client.close()


if __name__ == "__main__":
    unittest.main()
