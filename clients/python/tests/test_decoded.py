"""Decoded samples kept on the daemon's tier (docs/decoded-cache.md), through a real daemon over a folder store.

A later epoch reads each sample's decode back instead of its encoded bytes and the decode; a changed decode version,
a changed object and a flipped byte in an entry each lead to a fresh decode, never to a stale or wrong sample; no
entry reaches the object store; the daemon's own choice turns them on for a costly decode and leaves them off for a
trivial one. ``pack``/``unpack`` round-trip what a decode returns and build nothing else.
"""

import glob
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import time
import unittest
import urllib.request

from ferry_client import FerryClient, FerryError, pack, unpack

import support

HAVE_TORCH = importlib.util.find_spec("torch") is not None
SHARDS, PER_SHARD, SAMPLE = 4, 25, 3000


def sample_bytes(s, i, generation=0):
    return (f"s{s}-{i:02d}-g{generation};".encode() * 400)[:SAMPLE]


class Decoder:
    """A decode that counts its calls (in this process: the dataset is iterated without workers)."""

    def __init__(self, cost_s=0.0):
        self.calls = 0
        self.cost_s = cost_s

    def __call__(self, data):
        self.calls += 1
        if self.cost_s:
            end = time.thread_time() + self.cost_s
            while time.thread_time() < end:  # CPU, as a JPEG decode spends it
                pass
        import torch
        digest = hashlib.sha256(data).digest()
        return {"digest": torch.frombuffer(bytearray(digest), dtype=torch.uint8), "size": len(data),
                "head": data[:12]}


def status(url):
    with urllib.request.urlopen(url + "/_ferry/v1/status", timeout=10) as r:
        return json.load(r)


def epoch_row(url, job, epoch):
    for j in status(url)["jobs"]:
        if j["job"] == job:
            for e in j["epochs"]:
                if e["epoch"] == epoch:
                    return e
    raise AssertionError(f"no epoch {epoch} of {job} in the status")


class PackTest(unittest.TestCase):
    @unittest.skipUnless(HAVE_TORCH, "torch is not installed")
    def test_what_a_decode_returns_round_trips(self):
        import torch
        value = {"image": torch.arange(24, dtype=torch.float32).reshape(2, 3, 4), "label": 7, "ok": True,
                 "half": torch.ones(3, dtype=torch.bfloat16), "mask": torch.tensor([True, False]),
                 "name": "cat", "raw": b"\x00\xff", "pair": (1.5, None), "ids": [2 ** 70, -3]}
        back = unpack(pack(value))
        self.assertTrue(torch.equal(back["image"], value["image"]))
        self.assertEqual(back["image"].dtype, torch.float32)
        self.assertTrue(torch.equal(back["half"], value["half"]))
        self.assertTrue(torch.equal(back["mask"], value["mask"]))
        back["image"][0, 0, 0] = 1.0  # a writable tensor, as transforms that work in place need
        self.assertEqual({k: back[k] for k in ("label", "ok", "name", "raw", "pair", "ids")},
                         {k: value[k] for k in ("label", "ok", "name", "raw", "pair", "ids")})

    def test_a_pil_image_round_trips(self):
        support.require("PIL", "Pillow is not installed")
        from PIL import Image
        image = Image.new("RGB", (5, 3), (10, 20, 30))
        back = unpack(pack(image))
        self.assertEqual((back.mode, back.size, back.tobytes()), ("RGB", (5, 3), image.tobytes()))

    def test_damaged_bytes_and_other_types_are_one_sentence(self):
        with self.assertRaises(ValueError) as e:
            unpack(b"not a sample")
        self.assertEqual(str(e.exception), "these bytes are not a decoded sample ferry packed.")
        with self.assertRaises(ValueError):
            unpack(pack(["abc", b"xyz"])[:-2])
        with self.assertRaises(TypeError) as e:
            pack({"f": open})
        self.assertIn("cannot be kept decoded", str(e.exception))


@unittest.skipUnless(HAVE_TORCH, "torch is not installed (pip install -r scripts/requirements-torch.txt)")
class DecodedDaemonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ferry-decoded-")
        cls.store = os.path.join(cls.dir, "store")
        os.makedirs(os.path.join(cls.store, "data"))
        for s in range(SHARDS):
            with open(os.path.join(cls.store, "data", f"shard-{s}.bin"), "wb") as f:
                f.write(b"".join(sample_bytes(s, i) for i in range(PER_SHARD)))
        cls.cache = os.path.join(cls.dir, "cache")
        cls.daemon = support.FerryDaemon(cls.store, cls.cache, "--decoded", "50%")
        cls.client = FerryClient(cls.daemon.url)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.daemon.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @staticmethod
    def files(root):
        return sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "**", "*"), recursive=True)
                      if os.path.isfile(p) and "/.ferry" not in p and not os.path.basename(p).startswith("."))

    def register(self, job, client=None):
        client = client or self.client
        shards = []
        for s in range(SHARDS):
            head = client.head("data", f"shard-{s}.bin")
            shards.append({"bucket": "data", "key": f"shard-{s}.bin", "size": head["size"],
                           "etag": head["etag"].strip('"'), "samples": PER_SHARD,
                           "sample_offsets": [i * SAMPLE for i in range(PER_SHARD + 1)]})
        manifest = {"format": "ferry-manifest/1", "source": "test", "shards": shards}
        client.register_job(job, manifest=manifest, seed=5, world=(1, 1, 1), node=0, batch_size=10)

    def epoch(self, url, job, epoch, decoder, version="v1", transform=None):
        """One epoch as a training loop reads it: a DataLoader (no workers: the decoder counts in this process) timed
        by a StepReporter, which tells the daemon the epoch began."""
        from torch.utils.data import DataLoader

        from ferry_client import StepReporter
        from ferry_client.torch import FerryIterableDataset
        data = FerryIterableDataset(url, job, epoch, rank=0, decode=decoder, decode_version=version,
                                    with_sample=True, transform=transform)
        items = {}
        client = FerryClient(url)
        try:
            with StepReporter(client, job, 0, epoch=epoch, batch_size=10, ranks=1) as steps:
                for batch in steps.timed(DataLoader(data, batch_size=10, collate_fn=list)):
                    items.update((meta["index"], item) for meta, item in batch)
        finally:
            client.close()
        return items

    def check(self, items):
        import torch
        self.assertEqual(len(items), SHARDS * PER_SHARD)
        for index, item in items.items():
            expected = sample_bytes(index // PER_SHARD, index % PER_SHARD)
            self.assertTrue(torch.equal(item["digest"], torch.frombuffer(bytearray(hashlib.sha256(expected).digest()),
                                                                         dtype=torch.uint8)), f"sample {index}")
            self.assertEqual((item["size"], item["head"]), (SAMPLE, expected[:12]))

    def test_a_later_epoch_reads_decodes_and_none_reaches_the_store(self):
        self.register("later")
        stored_files = self.files(self.store)
        decoder = Decoder()
        self.check(self.epoch(self.daemon.url, "later", 1, decoder, version="later"))
        self.assertEqual(decoder.calls, SHARDS * PER_SHARD)
        flips = []
        items = self.epoch(self.daemon.url, "later", 2, decoder, version="later",
                           transform=lambda x: (flips.append(1), x)[1])
        self.check(items)
        self.assertEqual(decoder.calls, SHARDS * PER_SHARD, "epoch 2 decoded again")
        self.assertEqual(len(flips), SHARDS * PER_SHARD, "the transform runs every epoch, after a kept decode too")
        row = epoch_row(self.daemon.url, "later", 2)
        self.assertEqual(row["decoded_samples"], SHARDS * PER_SHARD)
        self.assertGreater(row["decoded_bytes_held"], 0)
        decoded = status(self.daemon.url)["decoded"]
        self.assertEqual((decoded["mode"], decoded["share"]), ("fixed", 0.5))
        self.assertGreaterEqual(decoded["entries"], SHARDS * PER_SHARD)
        # node-local: the store holds what it held, and nothing of the entries
        self.assertEqual(self.files(self.store), stored_files)
        self.assertTrue(glob.glob(os.path.join(self.cache + "-decoded", "*", "*")))

    def test_a_changed_decode_version_decodes_afresh(self):
        self.register("version")
        decoder = Decoder()
        self.epoch(self.daemon.url, "version", 1, decoder, version="v1")
        self.epoch(self.daemon.url, "version", 2, decoder, version="v2")
        self.assertEqual(decoder.calls, 2 * SHARDS * PER_SHARD)
        self.epoch(self.daemon.url, "version", 3, decoder, version="v2")
        self.assertEqual(decoder.calls, 2 * SHARDS * PER_SHARD)

    def test_a_flipped_byte_in_an_entry_decodes_afresh(self):
        self.register("flip")
        decoder = Decoder()
        self.epoch(self.daemon.url, "flip", 1, decoder, version="flip")
        corrupt_before = status(self.daemon.url)["decoded"]["corrupt"]
        newest = max(glob.glob(os.path.join(self.cache + "-decoded", "*", "*")), key=os.path.getmtime)
        with open(newest, "r+b") as f:
            f.seek(-5, os.SEEK_END)
            b = f.read(1)
            f.seek(-5, os.SEEK_END)
            f.write(bytes([b[0] ^ 0x40]))
        items = self.epoch(self.daemon.url, "flip", 2, decoder, version="flip")
        self.check(items)
        self.assertEqual(decoder.calls, SHARDS * PER_SHARD + 1)
        self.assertEqual(status(self.daemon.url)["decoded"]["corrupt"], corrupt_before + 1)

    def test_a_changed_object_is_never_served_from_its_old_decode(self):
        self.register("changed")
        decoder = Decoder()
        self.epoch(self.daemon.url, "changed", 1, decoder, version="changed")
        old_etag = self.client.head("data", "shard-1.bin")["etag"].strip('"')
        self.client.put("data", "shard-1.bin", b"".join(sample_bytes(1, i, 1) for i in range(PER_SHARD)))
        params = [("bucket", "data"), ("key", "shard-1.bin"), ("etag", old_etag), ("offset", 0), ("length", SAMPLE),
                  ("version", f"{Decoder.__module__}.{Decoder.__qualname__}:changed")]
        with self.assertRaises(FerryError) as e:
            self.client._request("GET", "/_ferry/v1/decoded", params)
        self.assertEqual(e.exception.status, 404)
        self.assertGreaterEqual(status(self.daemon.url)["decoded"]["stale"], 1)
        # the job indexed again: shard 1's samples are decoded afresh, from their new bytes; the others are kept
        self.register("changed-again")
        items = self.epoch(self.daemon.url, "changed-again", 1, decoder, version="changed")
        self.assertEqual(decoder.calls, SHARDS * PER_SHARD + PER_SHARD)
        for index in range(PER_SHARD, 2 * PER_SHARD):
            self.assertEqual(items[index]["head"], sample_bytes(1, index - PER_SHARD, 1)[:12])
        self.client.put("data", "shard-1.bin", b"".join(sample_bytes(1, i) for i in range(PER_SHARD)))


@unittest.skipUnless(HAVE_TORCH, "torch is not installed (pip install -r scripts/requirements-torch.txt)")
class DecodedAutoTest(unittest.TestCase):
    """The daemon's own choice (--decoded auto, the default), from what the loader measured."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ferry-decoded-auto-")
        store = os.path.join(cls.dir, "store")
        os.makedirs(os.path.join(store, "data"))
        for s in range(SHARDS):
            with open(os.path.join(store, "data", f"shard-{s}.bin"), "wb") as f:
                f.write(b"".join(sample_bytes(s, i) for i in range(PER_SHARD)))
        cls.store = store

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_two_epochs(self, name, decoder, version="v1", advice=False, args=()):
        daemon = support.FerryDaemon(self.store, os.path.join(self.dir, f"cache-{name}"), *args)
        client = FerryClient(daemon.url)
        try:
            DecodedDaemonTest.register(self, name, client)
            for epoch in (1, 2):
                DecodedDaemonTest.epoch(self, daemon.url, name, epoch, decoder, version=version)
            if advice:  # the advisor's findings, once its second has come round
                deadline = time.monotonic() + 10
                while True:
                    found = next(j["advice"] for j in status(daemon.url)["jobs"] if j["job"] == name)
                    if any("Keeping decoded samples" in f for f in found) or time.monotonic() > deadline:
                        return found
                    time.sleep(0.5)
            return status(daemon.url)["decoded"], epoch_row(daemon.url, name, 2)
        finally:
            client.close()
            daemon.stop()

    def test_without_a_version_the_advisor_says_what_keeping_them_would_give(self):
        decoder = Decoder(cost_s=0.004)
        findings = self.run_two_epochs("advised", decoder, version=None, advice=True)
        self.assertEqual(decoder.calls, 2 * SHARDS * PER_SHARD, "nothing is kept without decode_version")
        cpu_bound = [f for f in findings if f.startswith("Preprocessing is CPU-bound")]
        self.assertEqual(len(cpu_bound), 1, findings)
        self.assertRegex(cpu_bound[0], r"Keeping decoded samples on the tier would give about \d+ samples/s against \d+ now "
                                       r"by ferry's model \(a decode takes [0-9.]+ ms of CPU, a decoded read about [0-9.]+ ms\) "
                                       r"and needs [0-9.]+ ?[KMG]?i?B of it: pass decode_version= to FerryIterableDataset\.$")

    def test_with_the_daemon_keeping_none_the_advisor_says_to_turn_it_on(self):
        decoder = Decoder(cost_s=0.004)
        findings = self.run_two_epochs("off", decoder, advice=True, args=("--decoded", "off"))
        self.assertEqual(decoder.calls, 2 * SHARDS * PER_SHARD, "nothing is kept under --decoded off")
        cpu_bound = [f for f in findings if f.startswith("Preprocessing is CPU-bound")]
        self.assertEqual(len(cpu_bound), 1, findings)
        self.assertRegex(cpu_bound[0], r"Keeping decoded samples on the tier would give about \d+ samples/s .* needs "
                                       r"[0-9.]+ ?[KMG]?i?B of it: start the daemon with --decoded auto\.$")

    def test_a_costly_decode_is_kept(self):
        decoder = Decoder(cost_s=0.004)
        decoded, row = self.run_two_epochs("costly", decoder)
        self.assertEqual(decoded["mode"], "auto")
        self.assertGreater(decoded["quota_bytes"], 0, decoded["why"])
        self.assertRegex(decoded["why"], r"^[0-9.e-]+% of the tier decoded: a decode takes")
        # the first samples of epoch 1 only measured their size: the rest come back decoded
        self.assertGreater(row["decoded_samples"], SHARDS * PER_SHARD * 0.7)
        self.assertLess(decoder.calls, 2 * SHARDS * PER_SHARD * 0.7)

    def test_a_trivial_decode_leaves_them_off(self):
        decoder = Decoder()
        decoded, row = self.run_two_epochs("trivial", decoder)
        self.assertEqual((decoded["mode"], decoded["share"], decoded["entries"]), ("auto", 0, 0), decoded["why"])
        self.assertTrue(decoded["why"].startswith("off: a decode takes"), decoded["why"])
        self.assertEqual(row["decoded_samples"], 0)
        self.assertEqual(decoder.calls, 2 * SHARDS * PER_SHARD)


if __name__ == "__main__":
    unittest.main()
