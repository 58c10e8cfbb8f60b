"""Training processes find their daemon and their place with no arguments, against real ``ferry serve`` daemons.

Two daemons stand for two nodes' daemons; two real torchrun agents (static rendezvous on this machine) of two
processes each stand for two nodes' training pods, each agent's FERRY_ENDPOINT naming its node's daemon, as the
node-local Service does on Kubernetes. Every rank calls ``FerryClient().register_job(job, manifest=...)`` with no
URL, world or node: each daemon runs the job once (one "new", the rest "existing"), each node reads its own
shards, and a different job under the same name gets a 409.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from ferry_client import FerryClient, FerryError

import support

SHARDS = 8
SAMPLES_PER_SHARD = 4
SAMPLE_BYTES = 4096


class DaemonRegistrationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ferry-registration-")
        store = os.path.join(cls.dir, "store")
        os.makedirs(os.path.join(store, "data"))
        for i in range(SHARDS):
            with open(os.path.join(store, "data", f"shard-{i:02d}.bin"), "wb") as f:
                f.write(bytes([i]) * (SAMPLES_PER_SHARD * SAMPLE_BYTES))
        cls.daemons = []
        try:
            for node in (0, 1):  # both over the same store, as two nodes' daemons over one bucket
                cls.daemons.append(support.FerryDaemon(store, os.path.join(cls.dir, f"cache-{node}")))
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

    def torchrun(self, job, seed=0):
        """Two torchrun agents of two ranks, agent k's ranks talking to daemon k; returns every rank's result file."""
        support.require("torch", "torchrun is PyTorch's launcher")
        port = support.free_port()
        out_dir = tempfile.mkdtemp(prefix="results-", dir=self.dir)
        agents = []
        for node in (0, 1):
            env = dict(os.environ, FERRY_ENDPOINT=self.daemons[node].url)
            agents.append(subprocess.Popen(
                [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", str(node),
                 "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", str(port), "--no-python",
                 sys.executable, os.path.join(os.path.dirname(__file__), "rank_main.py"), job, self.manifest, str(seed),
                 out_dir],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env))
        for agent in agents:
            out, _ = agent.communicate(timeout=300)
            self.assertEqual(agent.returncode, 0, out)
        results = []
        for name in sorted(os.listdir(out_dir)):
            with open(os.path.join(out_dir, name)) as f:
                results.append(json.load(f))
        self.assertEqual(len(results), 4, sorted(os.listdir(out_dir)))
        return sorted(results, key=lambda r: r["rank"])

    def test_every_rank_registers_with_no_arguments_and_each_node_reads_its_own_shards(self):
        results = self.torchrun("no-arguments", seed=5)
        for r in results:
            self.assertEqual(r["url"], self.daemons[r["node"]].url, "FerryClient() took FERRY_ENDPOINT")
            self.assertEqual(r["ranks"], 4, "the world torchrun set: 2 nodes x 2 ranks")
            self.assertEqual(r["node"], r["rank"] // 2)
        for node in (0, 1):
            outcomes = sorted(r["registration"] for r in results if r["node"] == node)
            self.assertEqual(outcomes, ["existing", "new"], f"node {node}'s daemon ran the job once")
        node_keys = [set().union(*(r["keys"] for r in results if r["node"] == node)) for node in (0, 1)]
        self.assertFalse(node_keys[0] & node_keys[1], "the node partition: each node reads its own shards")
        self.assertEqual(len(node_keys[0] | node_keys[1]), SHARDS)
        self.assertEqual(sum(r["samples"] for r in results), SHARDS * SAMPLES_PER_SHARD)
        for daemon in self.daemons:
            with FerryClient(daemon.url) as client:
                jobs = [j for j in client.status()["jobs"] if j["job"] == "no-arguments"]
            self.assertEqual(len(jobs), 1)
            self.assertEqual(len(jobs[0]["epochs"]), 1, "no rank restarted the job")

    def test_a_different_job_under_the_same_name_is_409_unless_replaced(self):
        with FerryClient(self.daemons[0].url) as client:
            first = client.register_job("conflict", manifest=self.manifest, seed=1, world=(2, 2, 1), node=0, batch_size=2)
            self.assertEqual(first["registration"], "new")
            again = client.register_job("conflict", manifest=self.manifest, seed=1, world=(2, 2, 1), node=0, batch_size=2)
            self.assertEqual(again["registration"], "existing")
            with self.assertRaises(FerryError) as e:
                client.register_job("conflict", manifest=self.manifest, seed=2, world=(2, 2, 1), node=0, batch_size=2)
            self.assertEqual((e.exception.status, e.exception.code), (409, "JobConflict"))
            self.assertIn("seed 1 here, 2 asked", e.exception.message)
            with self.assertRaises(FerryError) as e:  # a rank of node 1 sent to node 0's daemon
                client.register_job("conflict", manifest=self.manifest, seed=1, world=(2, 2, 1), node=1, batch_size=2)
            self.assertIn("each node's ranks register with their own node's daemon", e.exception.message)
            replaced = client.register_job("conflict", manifest=self.manifest, seed=2, world=(2, 2, 1), node=0,
                                           batch_size=2, replace=True)
            self.assertEqual(replaced["registration"], "replaced")

    def test_explicit_world_and_node_do_not_read_the_environment(self):
        # a JobSet pod says its index but no world size: placement() refuses it, explicit arguments need none of it
        saved = dict(os.environ)
        os.environ["JOB_COMPLETION_INDEX"] = "1"
        try:
            with FerryClient(self.daemons[1].url) as client:
                with self.assertRaises(ValueError) as e:
                    client.register_job("explicit", manifest=self.manifest)
                self.assertIn("JOB_COMPLETION_INDEX", str(e.exception))
                answer = client.register_job("explicit", manifest=self.manifest, world=(2, 1, 1), node=1)
                self.assertEqual((answer["registration"], answer["ranks"]), ("new", 2))
        finally:
            os.environ.clear()
            os.environ.update(saved)


if __name__ == "__main__":
    unittest.main()
