"""PyTorch's distributed checkpoint through a real ``ferry serve --write-back``: a save acknowledged by the daemon,
its metadata in the store only after every other file, a load that restores the same tensors, and one sentence for
each bad input."""

import hashlib
import os
import shutil
import tempfile
import time
import unittest

import support
from support import FerryDaemon, require

require("torch", "the checkpoint test saves and loads a state dict with torch.distributed.checkpoint")
import torch  # noqa: E402
import torch.distributed.checkpoint as dcp  # noqa: E402
from torch.distributed.checkpoint.api import CheckpointException  # noqa: E402

from ferry_client import FerryClient, FerryError  # noqa: E402
from ferry_client.checkpoint import FerryStorageReader, FerryStorageWriter, wait_durable  # noqa: E402


def _state(seed):
    g = torch.Generator().manual_seed(seed)
    return {"model": {"w": torch.randn(300, 200, generator=g), "b": torch.randn(200, generator=g)},
            "optim": {"step": torch.tensor(seed), "m": torch.randn(300, 200, generator=g)}}


def _assert_same(test, state, restored):
    for group, tensors in state.items():
        for name, tensor in tensors.items():
            test.assertTrue(torch.equal(restored[group][name], tensor), f"{group}.{name}")


def _zeros_like(state):
    return {group: {k: torch.zeros_like(v) for k, v in tensors.items()} for group, tensors in state.items()}


class CheckpointTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ferry-ckpt-")
        cls.store = os.path.join(cls.tmp, "store")
        os.makedirs(os.path.join(cls.store, "ckpt"))
        cls.daemon = FerryDaemon(cls.store, os.path.join(cls.tmp, "cache"), "--write-back")
        cls.client = FerryClient(cls.daemon.url)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def _in_store(self, prefix):
        folder = os.path.join(self.store, "ckpt", prefix)
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []

    def test_a_save_is_acknowledged_then_durable_metadata_last_and_loads_the_same_tensors(self):
        state = _state(1)
        writer = FerryStorageWriter("s3://ckpt/run-1/step-100", endpoint=self.daemon.url)
        dcp.save(state, storage_writer=writer)
        writer.wait_durable(120)
        files = self._in_store("run-1/step-100")
        self.assertIn(".metadata", files)
        self.assertTrue(any(f.endswith(".distcp") for f in files), files)
        self.assertTrue(self.client.flush(30, bucket="ckpt", prefix="run-1/").complete)

        restored = _zeros_like(state)
        dcp.load(restored, storage_reader=FerryStorageReader("s3://ckpt/run-1/step-100", endpoint=self.daemon.url))
        _assert_same(self, state, restored)

    def test_a_reader_reads_a_checkpoint_whose_metadata_is_not_in_the_store_yet(self):
        state = _state(2)
        dcp.save(state, storage_writer=FerryStorageWriter("s3://ckpt/run-2/step-1", endpoint=self.daemon.url))
        restored = _zeros_like(state)  # no wait_durable: the daemon answers with the metadata it has not uploaded yet
        dcp.load(restored, storage_reader=FerryStorageReader("s3://ckpt/run-2/step-1", endpoint=self.daemon.url))
        self.assertTrue(torch.equal(restored["model"]["w"], state["model"]["w"]))
        wait_durable("s3://ckpt/run-2/step-1", 120, endpoint=self.daemon.url)
        self.assertIn(".metadata", self._in_store("run-2/step-1"))

    def test_a_durable_save_returns_with_every_file_in_the_store(self):
        writer = FerryStorageWriter("s3://ckpt/run-3/step-1", endpoint=self.daemon.url, durable=True)
        dcp.save(_state(3), storage_writer=writer)
        files = self._in_store("run-3/step-1")
        self.assertIn(".metadata", files)
        self.assertTrue(any(f.endswith(".distcp") for f in files), files)

    def test_a_streamed_write_keeps_every_byte_and_one_given_up_keeps_none(self):
        data = os.urandom(3 * 1024 * 1024 + 17)
        stream = self.client.put_stream("ckpt", "streamed/whole")
        view, at = memoryview(data), 0
        for size in (1, 5000, 2 * 1024 * 1024, 300, 1024 * 1024):  # small writes gathered, large ones sent as they are
            stream.write(view[at:at + size])
            at += size
        stream.write(view[at:])
        self.assertEqual(len(data), stream.tell())
        stream.close()
        self.assertEqual("local", stream.result.durability)
        self.assertEqual('"' + hashlib.md5(data).hexdigest() + '"', stream.result.etag)
        self.assertEqual(data, self.client.get("ckpt", "streamed/whole"))

        given_up = self.client.put_stream("ckpt", "streamed/partial")
        given_up.write(data[:2 * 1024 * 1024])
        given_up.abort()
        with self.assertRaises(FerryError) as e:
            self.client.head("ckpt", "streamed/partial")
        self.assertEqual(404, e.exception.status)

        missing = self.client.put_stream("no-such-bucket", "k")
        missing.write(b"x" * 1000)
        with self.assertRaises(FerryError) as e:
            missing.close()
        self.assertEqual("NoSuchBucket", e.exception.code)

    def test_bad_input_gets_one_sentence(self):
        with self.assertRaises(ValueError) as e:
            FerryStorageWriter("/tmp/checkpoints/step-1", endpoint=self.daemon.url)
        self.assertIn("s3://BUCKET/PREFIX", str(e.exception))
        with self.assertRaises(ValueError) as e:
            FerryStorageReader("s3://ckpt", endpoint=self.daemon.url)
        self.assertIn("a bucket and a prefix", str(e.exception))

        state = _state(4)
        writer = FerryStorageWriter("s3://ckpt/run-4/step-1", endpoint=self.daemon.url, durable=True)
        dcp.save(state, storage_writer=writer)
        data = [f for f in self._in_store("run-4/step-1") if f.endswith(".distcp")]
        self.client.delete("ckpt", "run-4/step-1/" + data[0])
        with self.assertRaises(CheckpointException) as e:  # DCP's own (a BaseException), carrying the rank's error
            dcp.load(_zeros_like(state), storage_reader=FerryStorageReader("s3://ckpt/run-4/step-1", endpoint=self.daemon.url))
        self.assertIn("is missing", str(e.exception))

    def test_a_save_past_the_write_back_quota_is_refused_before_anything_is_written(self):
        small = FerryDaemon(self.store, os.path.join(self.tmp, "small-cache"), "--write-back", "--write-back-quota", "1MiB")
        try:
            state = {"model": {"w": torch.zeros(512, 1024)}}  # 2 MiB
            with self.assertRaises(CheckpointException) as e:
                dcp.save(state, storage_writer=FerryStorageWriter("s3://ckpt/run-7/step-1", endpoint=small.url))
            self.assertIn("more than the 1048576 left of the daemon's write-back quota", str(e.exception))
            self.assertEqual([], self._in_store("run-7/step-1"))
            with self.assertRaises(FerryError) as missing:
                FerryClient(small.url).head("ckpt", "run-7/step-1/__0_0.distcp")
            self.assertEqual(404, missing.exception.status)
            dcp.save(state, storage_writer=FerryStorageWriter("s3://ckpt/run-7/step-1", endpoint=small.url, durability="durable"))
            self.assertIn(".metadata", self._in_store("run-7/step-1"))  # durable: written through, nothing to keep

            quarter = {"model": {"w": torch.zeros(256, 300)}}  # 300 KiB: fits alone, not for 4 ranks on the node
            os.environ["LOCAL_WORLD_SIZE"] = "4"
            try:
                with self.assertRaises(CheckpointException) as e:
                    dcp.save(quarter, storage_writer=FerryStorageWriter("s3://ckpt/run-8/step-1", endpoint=small.url))
                self.assertIn("for the 4 ranks of this node", str(e.exception))
            finally:
                del os.environ["LOCAL_WORLD_SIZE"]
            dcp.save(quarter, storage_writer=FerryStorageWriter("s3://ckpt/run-8/step-1", endpoint=small.url))
        finally:
            small.stop()



class PeerCheckpointTest(unittest.TestCase):
    """Two write-back daemons in a group: the writer's node cannot reach the store (an outage), so its checkpoint is
    only on its disk and, asked ``peer``, on its peer's. The writer's daemon is then killed with ``kill -9`` and its
    cache folder deleted, as a preempted node's disk goes: the peer adopts the copies, uploads them (metadata last)
    and the checkpoint loads, byte for byte."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ferry-ckpt-peer-")
        cls.store = os.path.join(cls.tmp, "store")
        os.makedirs(os.path.join(cls.store, "ckpt"))
        writer_port, peer_port = support.free_port(), support.free_port()
        group = f"http://127.0.0.1:{writer_port},http://127.0.0.1:{peer_port}"
        common = ("--write-back", "--group", group, "--peer-grace", "2s")
        cls.writer_cache = os.path.join(cls.tmp, "writer-cache")
        unreachable = f"http://127.0.0.1:{support.free_port()}"  # nothing listens: every upload from there fails
        keys = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test-secret"}  # any: nothing answers there
        cls.writer = FerryDaemon(cls.store, cls.writer_cache, *common, port=writer_port, upstream=unreachable, env=keys)
        cls.peer = FerryDaemon(cls.store, os.path.join(cls.tmp, "peer-cache"), *common, port=peer_port)

    @classmethod
    def tearDownClass(cls):
        cls.writer.stop()
        cls.peer.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_checkpoint_acknowledged_on_a_peer_survives_its_writer_and_its_disk(self):
        state = _state(5)
        writer = FerryStorageWriter("s3://ckpt/run-5/step-1", endpoint=self.writer.url)  # peer: the default
        dcp.save(state, storage_writer=writer)
        self.assertEqual({"peer"}, set(writer.levels), writer.levels)
        self.assertEqual([], os.listdir(os.path.join(self.store, "ckpt")), "the store has nothing yet")

        self.writer.kill()
        shutil.rmtree(self.writer_cache)  # the preempted node's disk goes with it

        peer = FerryClient(self.peer.url)
        deadline = time.monotonic() + 120
        while not os.path.exists(os.path.join(self.store, "ckpt", "run-5", "step-1", ".metadata")):
            self.assertLess(time.monotonic(), deadline, "the peer did not make the checkpoint durable: " + self.peer.log())
            time.sleep(0.2)
        wait_durable("s3://ckpt/run-5/step-1", 60, client=peer)
        restored = _zeros_like(state)
        dcp.load(restored, storage_reader=FerryStorageReader("s3://ckpt/run-5/step-1", endpoint=self.peer.url))
        _assert_same(self, state, restored)

    def test_a_level_the_daemon_does_not_know_is_one_sentence(self):
        with self.assertRaises(ValueError) as e:
            FerryStorageWriter("s3://ckpt/run-6/step-1", endpoint=self.peer.url, durability="twice")
        self.assertIn("local, peer or durable", str(e.exception))
        with self.assertRaises(FerryError) as e:
            FerryClient(self.peer.url)._request("PUT", "/ckpt/odd", headers={"x-ferry-durability": "twice"}, body=b"x")
        self.assertIn("x-ferry-durability is local, peer or durable", str(e.exception))


if __name__ == "__main__":
    unittest.main()
