"""A training process's place in its job from its launcher's variables, and the daemon a client finds unasked.

The environments are the launchers' own, variable for variable: torchrun's (torch's LocalElasticAgent), a Kubeflow
PyTorchJob pod's (the training operator's setPodEnv) and a JobSet pod's. The Java loader reads them the same way
(dev.ferry.plan.PlacementTest has the same cases). test_torchrun_sets_what_placement_reads runs a real torchrun.
"""

import contextlib
import json
import os
import re
import subprocess
import sys
import unittest

from ferry_client import DEFAULT_URL, FerryClient, placement

import support


def torchrun(nodes, per_node, node, local):
    """What torchrun gives the process of local rank ``local`` on node ``node`` of ``nodes`` x ``per_node``."""
    rank = node * per_node + local
    return {"LOCAL_RANK": str(local), "RANK": str(rank), "GROUP_RANK": str(node), "ROLE_RANK": str(rank),
            "ROLE_NAME": "default", "LOCAL_WORLD_SIZE": str(per_node), "WORLD_SIZE": str(nodes * per_node),
            "GROUP_WORLD_SIZE": str(nodes), "ROLE_WORLD_SIZE": str(nodes * per_node), "MASTER_ADDR": "train-master-0",
            "MASTER_PORT": "29500", "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "0",
            "TORCHELASTIC_RUN_ID": "none"}


@contextlib.contextmanager
def environment(variables):
    """This process's environment is ``variables`` only, inside the block."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(variables)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class PlacementTest(unittest.TestCase):
    def test_torchrun(self):
        p = placement(torchrun(4, 8, 2, 5))
        self.assertEqual((p.nodes, p.ranks_per_node, p.node, p.rank, p.local_rank, p.source), (4, 8, 2, 21, 5, "torchrun"))
        self.assertEqual(p.world_size, 32)

    def test_torchrun_inside_a_kubeflow_pod_wins(self):
        env = torchrun(2, 4, 1, 3)
        env.update(PET_NNODES="2", PET_NPROC_PER_NODE="4", PET_NODE_RANK="1", PET_MASTER_ADDR="j-master-0",
                   PET_MASTER_PORT="23456", PYTHONUNBUFFERED="0")
        p = placement(env)
        self.assertEqual((p.nodes, p.ranks_per_node, p.node, p.rank), (2, 4, 1, 7))

    def test_node_rank_instead_of_group_rank(self):
        env = {"WORLD_SIZE": "16", "LOCAL_WORLD_SIZE": "8", "RANK": "9", "LOCAL_RANK": "1", "NODE_RANK": "1"}
        self.assertEqual((placement(env).node, placement(env).source), (1, "WORLD_SIZE"))
        del env["NODE_RANK"]
        self.assertEqual(placement(env).node, 1)  # RANK // LOCAL_WORLD_SIZE

    def test_kubeflow_pod_with_nproc_per_node_knows_its_node_not_its_rank(self):
        env = {"MASTER_ADDR": "j-master-0", "MASTER_PORT": "23456", "WORLD_SIZE": "24", "RANK": "2",
               "PET_NPROC_PER_NODE": "8", "PET_NODE_RANK": "2", "PET_NNODES": "3", "PYTHONUNBUFFERED": "0"}
        p = placement(env)
        self.assertEqual((p.nodes, p.ranks_per_node, p.node, p.rank, p.source), (3, 8, 2, -1, "kubeflow"))

    def test_kubeflow_pod_with_one_process(self):
        p = placement({"WORLD_SIZE": "3", "RANK": "1", "PET_NPROC_PER_NODE": "1", "PET_NODE_RANK": "1", "PET_NNODES": "3"})
        self.assertEqual((p.nodes, p.ranks_per_node, p.rank), (3, 1, 1))

    def test_kubeflow_pod_with_the_default_nproc_auto_is_one_process_per_pod(self):
        p = placement({"WORLD_SIZE": "4", "RANK": "3", "PET_NPROC_PER_NODE": "auto", "PET_NODE_RANK": "3", "PET_NNODES": "4"})
        self.assertEqual((p.nodes, p.ranks_per_node, p.node, p.rank), (4, 1, 3, 3))

    def test_older_kubeflow_pod_world_size_and_rank_are_nodes(self):
        p = placement({"MASTER_ADDR": "j-master-0", "MASTER_PORT": "23456", "WORLD_SIZE": "4", "RANK": "3"})
        self.assertEqual((p.nodes, p.ranks_per_node, p.node, p.rank), (4, 1, 3, 3))

    def test_nothing_set_is_one_process(self):
        self.assertEqual(placement({"HOME": "/root"}), (1, 1, 0, 0, 0, "none"))
        with environment(torchrun(2, 4, 1, 2)):
            self.assertEqual(placement().rank, 6)  # os.environ when no mapping is given

    def test_refusals_name_the_variables(self):
        cases = [
            ({"JOB_COMPLETION_INDEX": "3"}, "This process is index 3 of an Indexed Job or JobSet (JOB_COMPLETION_INDEX)"),
            ({"PET_NNODES": "1:4", "PET_NPROC_PER_NODE": "8"}, "PET_NNODES is the range 1:4"),
            ({"PET_NNODES": "2", "PET_NPROC_PER_NODE": "auto", "PET_NODE_RANK": "0"}, "PET_NPROC_PER_NODE is 'auto'"),
            ({"WORLD_SIZE": "12", "LOCAL_WORLD_SIZE": "8", "RANK": "0"}, "the same number of ranks on every node"),
            (dict(torchrun(2, 4, 0, 0), GROUP_WORLD_SIZE="3"), "GROUP_WORLD_SIZE 3 nodes"),
            (dict(torchrun(2, 4, 0, 1), RANK="5"), "ferry's plans number ranks node by node"),
            ({"WORLD_SIZE": "four", "RANK": "0"}, "WORLD_SIZE must be a whole number of at least 0, not 'four'."),
            ({"WORLD_SIZE": "4", "RANK": "4"}, "not one of the world's 4 nodes"),
        ]
        for env, message in cases:
            with self.subTest(env=env):
                with self.assertRaises(ValueError) as e:
                    placement(env)
                self.assertIn(message, str(e.exception))


class EndpointTest(unittest.TestCase):
    def test_no_url_is_FERRY_ENDPOINT_else_the_nodes_daemon(self):
        with environment({"FERRY_ENDPOINT": "http://ferry-node.ferry.svc:9099"}):
            self.assertEqual(FerryClient().url, "http://ferry-node.ferry.svc:9099")
            self.assertEqual(FerryClient("http://10.0.0.7:9099").url, "http://10.0.0.7:9099")  # a URL given wins
        with environment({}):
            self.assertEqual(FerryClient().url, DEFAULT_URL)
            self.assertEqual(DEFAULT_URL, "http://127.0.0.1:9099")
        with environment({"FERRY_ENDPOINT": "ferry-node:9099"}):
            with self.assertRaises(ValueError) as e:
                FerryClient()
            self.assertIn("(from FERRY_ENDPOINT)", str(e.exception))


class TorchrunTest(unittest.TestCase):
    def test_torchrun_sets_what_placement_reads(self):
        """Two real torchrun agents (static rendezvous on this machine, as two nodes) of two processes each."""
        support.require("torch", "torchrun is PyTorch's launcher")
        script = "import json; from ferry_client import placement; print('PLACEMENT ' + json.dumps(placement()._asdict()))"
        port = support.free_port()
        agents = []
        for node in (0, 1):
            agents.append(subprocess.Popen(
                [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", str(node),
                 "--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", str(port), "--no-python",
                 sys.executable, "-c", script],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        seen = []
        for agent in agents:
            out, _ = agent.communicate(timeout=300)
            self.assertEqual(agent.returncode, 0, out)
            # the agent's two processes share its stdout: on a loaded machine their lines can interleave, so each
            # record is taken where it starts, not where a line starts
            for match in re.finditer(r"PLACEMENT (\{[^{}]*\})", out):
                seen.append(json.loads(match.group(1)))
        self.assertEqual(sorted((p["node"], p["rank"], p["local_rank"]) for p in seen),
                         [(0, 0, 0), (0, 1, 1), (1, 2, 0), (1, 3, 1)])
        self.assertTrue(all((p["nodes"], p["ranks_per_node"], p["source"]) == (2, 2, "torchrun") for p in seen), seen)


if __name__ == "__main__":
    unittest.main()
