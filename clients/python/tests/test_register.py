"""register_job's plan arguments are checked before anything is sent."""

import unittest

from ferry_client import FerryClient


class RegisterArgumentsTest(unittest.TestCase):
    def setUp(self):
        self.client = FerryClient("http://127.0.0.1:9")  # nothing listens: a check that passed would fail to connect

    def tearDown(self):
        self.client.close()

    def test_bad_plan_arguments_are_one_sentence(self):
        cases = [
            (dict(partition="rank"), "partition must be 'node', 'global' or 'auto', not 'rank'."),
            (dict(canonical_nodes=0), "canonical_nodes must be a positive integer, not 0."),
            (dict(mix_fraction=1.5), "mix_fraction must be a number from 0 to 1, not 1.5."),
            (dict(shuffle_block_shards="4"), "shuffle_block_shards must be a positive integer, not '4'."),
        ]
        for kwargs, message in cases:
            with self.subTest(**kwargs):
                with self.assertRaises(ValueError) as e:
                    self.client.register_job("j", manifest_key="b/m.json", world=(2, 1, 1), **kwargs)
                self.assertEqual(str(e.exception), message)

    def test_a_resume_that_is_not_a_checkpoint_is_one_sentence(self):
        cases = [
            (dict(resume=[0, 1]), "resume must be the dict FerryClient.checkpoint returned, not list."),
            (dict(resume={"epoch": 2, "position": 5}),
             "resume has no homes: pass the dict FerryClient.checkpoint returned for a node-partition job."),
        ]
        for kwargs, message in cases:
            with self.subTest(**kwargs):
                with self.assertRaises(ValueError) as e:
                    self.client.register_job("j", manifest_key="b/m.json", world=(2, 1, 1), node=0, **kwargs)
                self.assertEqual(str(e.exception), message)
        with self.assertRaises(ValueError) as e:
            self.client.register_job("j", ranks=[["b/k"]], resume={"homes": {}})
        self.assertEqual(str(e.exception), "resume applies to a job with a manifest, not to one given as ranks.")


if __name__ == "__main__":
    unittest.main()
