"""The order as spans and the reads that follow it, against a real ``ferry serve``: a run of a shard's samples is
one ranged GET, the samples of a shard that a window holds are one, single objects are read once each on
kept-alive connections, and a DataLoader's workers make exactly the requests their plans say.

Requests are counted where they arrive: the daemon's ``serve.requests`` (every request it answered, the status
request that reads it included, which is counted by the next one), and ``serve.connections`` (open now).
"""

import os
import shutil
import tempfile
import unittest
import warnings

from ferry_client import FerryClient, Samples
from ferry_client.client import samples_of

import support

SHARDS = 6
PER_SHARD = 16
SAMPLE = 1000
SMALL = 40


def sample_bytes(shard, i):
    """Sample i of shard ``shard``: SAMPLE recognisable bytes."""
    return (f"<{shard}:{i:02d}>".encode() * SAMPLE)[:SAMPLE]


def small_bytes(i):
    return (f"small-{i:02d};".encode() * 300)[: 2000 + i]


class SpansTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ferry-spans-")
        store = os.path.join(cls.dir, "store")
        os.makedirs(os.path.join(store, "data", "small"))
        for s in range(SHARDS):
            with open(os.path.join(store, "data", f"shard-{s}.bin"), "wb") as f:
                f.write(b"".join(sample_bytes(s, i) for i in range(PER_SHARD)))
        for i in range(SMALL):
            with open(os.path.join(store, "data", "small", f"obj-{i:02d}"), "wb") as f:
                f.write(small_bytes(i))
        cls.daemon = support.FerryDaemon(store, os.path.join(cls.dir, "cache"), "--prefetch-bytes", "0")
        cls.client = FerryClient(cls.daemon.url)
        cls.watcher = FerryClient(cls.daemon.url)  # reads the daemon's counters on a connection of its own
        cls.expected = {}
        shards = []
        for s in range(SHARDS):
            head = cls.client.head("data", f"shard-{s}.bin")
            shards.append({"bucket": "data", "key": f"shard-{s}.bin", "size": head["size"],
                           "etag": head["etag"].strip('"'), "samples": PER_SHARD,
                           "sample_offsets": [i * SAMPLE for i in range(PER_SHARD + 1)]})
            for i in range(PER_SHARD):
                cls.expected[("data", f"shard-{s}.bin", i * SAMPLE)] = sample_bytes(s, i)
        manifest = {"format": "ferry-manifest/1", "source": "test", "shards": shards}
        world = (1, 1, 1)
        # a shuffle block of one shard: a shard's samples are together in the order, a batch is one or two spans
        cls.client.register_job("runs", manifest=manifest, seed=3, world=world, node=0, batch_size=8,
                                 shuffle_block_shards=1)
        # three shards' samples shuffled together: short spans, which a window of reads brings back together
        cls.client.register_job("mixed", manifest=manifest, seed=3, world=world, node=0, batch_size=8,
                                shuffle_block_shards=3)
        objects = []
        for i in range(SMALL):
            head = cls.client.head("data", f"small/obj-{i:02d}")
            objects.append({"bucket": "data", "key": f"small/obj-{i:02d}", "size": head["size"],
                            "etag": head["etag"].strip('"'), "samples": 1})
            cls.expected[("data", f"small/obj-{i:02d}", 0)] = small_bytes(i)
        cls.client.register_job("small", manifest={"format": "ferry-manifest/1", "source": "test", "shards": objects},
                                seed=3, world=world, node=0, batch_size=8)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.watcher.close()
        cls.daemon.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def served(self):
        return self.watcher.status()["serve"]

    def requests_during(self, action):
        """The requests the daemon answered while ``action()`` ran (its status requests taken out)."""
        before = self.served()["requests"]
        result = action()
        return self.served()["requests"] - before - 1, result  # the first status request is counted by the second

    def check_bytes(self, plan, got):
        self.assertEqual(len(got), len(plan))
        for sample, data in zip(plan, got):
            self.assertEqual(data, self.expected[(sample["bucket"], sample["key"], sample["offset"])],
                             f"sample {sample['index']}")

    def test_the_order_as_spans_is_the_older_form_cut_into_runs(self):
        for job in ("runs", "mixed", "small"):
            for worker, workers in ((0, 1), (1, 3)):
                with self.subTest(job=job, worker=worker, workers=workers):
                    spans = self.client.order_spans(job, 2, 0, worker, workers)
                    older = self.client._api("GET", f"jobs/{job}/order",
                                             [("epoch", 2), ("rank", 0), ("worker", worker), ("workers", workers),
                                              ("start", 0), ("form", "samples")])["samples"]
                    self.assertEqual(samples_of(spans), older)
                    self.assertEqual(self.client.order(job, 2, 0, worker, workers), older)
                    for a, b in zip(spans, spans[1:]):
                        self.assertNotEqual((a["key"], a["etag"]), (b["key"], b["etag"]))

    def test_a_span_is_one_request(self):
        samples = Samples(self.client, "runs", epoch=1, worker=0, workers=2, window=1, meta=True)
        spans = self.client.order_spans("runs", 1, 0, 0, 2)
        plan = samples.plan  # the order asked before counting
        self.assertEqual(len(samples.reads), len(spans))
        self.assertLess(len(spans), len(plan) / 3)
        requests, pairs = self.requests_during(lambda: list(samples))
        self.assertEqual(requests, len(spans))
        self.assertEqual([s for s, _ in pairs], plan)
        self.check_bytes(plan, [d for _, d in pairs])

    def test_a_window_reads_the_spans_of_one_shard_together(self):
        samples = Samples(self.client, "mixed", epoch=1, window=256)
        plan = samples.plan
        spans = self.client.order_spans("mixed", 1, 0)
        shards = {s["key"] for s in plan}
        self.assertEqual(len(samples.reads), len(shards))  # the whole order fits one window: one read per shard
        self.assertGreater(len(spans), 2 * len(shards))
        requests, got = self.requests_during(lambda: list(samples))
        self.assertEqual(requests, len(shards))
        self.check_bytes(plan, got)

    def test_single_objects_are_read_once_each_on_kept_alive_connections(self):
        samples = Samples(self.client, "small", epoch=1, prefetch=8, threads=4)
        plan = samples.plan
        self.assertEqual(len(samples.reads), SMALL)
        open_before = self.served()["connections"]
        before = self.served()["requests"]
        it = iter(samples)
        got = [next(it) for _ in range(SMALL - 1)]  # the pool's threads (and their connections) still live
        opened = self.served()["connections"] - open_before
        got.append(next(it))
        self.assertEqual(list(it), [])
        requests = self.served()["requests"] - before - 2
        self.assertEqual(requests, SMALL)
        self.assertGreaterEqual(opened, 1)
        self.assertLessEqual(opened, 4, "one connection per reading thread, kept alive across its requests")
        self.check_bytes(plan, got)

    def test_a_dataloader_reads_the_rank_order_with_the_requests_its_workers_plan(self):
        support.require("torch", "FerryIterableDataset is a PyTorch dataset")
        from torch.utils.data import DataLoader

        from ferry_client.torch import FerryIterableDataset
        warnings.filterwarnings("ignore", message="This DataLoader will create")
        plan = self.client.order("runs", 2, 0)
        planned = sum(len(Samples(self.client, "runs", epoch=2, worker=w, workers=2).reads) for w in range(2))
        dataset = FerryIterableDataset(self.daemon.url, "runs", epoch=2, rank=0, with_sample=True)
        self.assertEqual(len(dataset), len(plan))  # the rank's order, asked once: list(loader) asks len() again
        loader = DataLoader(dataset, batch_size=8, num_workers=2, collate_fn=list)
        requests, batches = self.requests_during(lambda: list(loader))
        got = [item for batch in batches for item in batch]
        self.assertEqual([meta["index"] for meta, _ in got], [s["index"] for s in plan])
        self.check_bytes(plan, [data for _, data in got])
        self.assertEqual(requests, planned + 2)  # each worker's order, then its reads (the length was known)
        self.assertLess(planned, len(plan) / 3)

    def test_a_dataset_knows_its_length_from_where_it_resumes(self):
        support.require("torch", "FerryIterableDataset is a PyTorch dataset")
        from ferry_client.torch import FerryIterableDataset
        dataset = FerryIterableDataset(self.daemon.url, "runs", epoch=1, rank=0)
        whole = len(self.client.order("runs", 1, 0))
        self.assertEqual(len(dataset), whole)
        dataset.load_state_dict(dataset.state_dict(40))  # one rank: its 40 samples are the job's
        self.assertEqual(len(dataset), whole - 40)
        self.assertEqual(len(list(dataset)), whole - 40)


if __name__ == "__main__":
    unittest.main()
