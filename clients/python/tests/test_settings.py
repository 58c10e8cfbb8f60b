"""The settings objects pin their defaults and name the field that is wrong; register_job sends what they say, a keyword
given beside them winning; the daemon's answers read as dicts and as typed objects.

What register_job sends is read where it arrives: a stdlib HTTP server on a free port of 127.0.0.1 records each request
and answers as the daemon does (its registration answer's fields), so no daemon is built for it.
"""

import dataclasses
import http.server
import json
import pickle
import threading
import unittest

from ferry_client import Checkpoint, FerryClient, Job, JobSettings, ReadSettings, Samples


class DefaultsTest(unittest.TestCase):
    def test_job_settings_defaults(self):
        self.assertEqual(dataclasses.asdict(JobSettings()), {
            "seed": 0, "batch_size": 1, "partition": None, "canonical_nodes": None, "mix_fraction": None,
            "shuffle_block_shards": None})

    def test_read_settings_defaults(self):
        self.assertEqual(dataclasses.asdict(ReadSettings()), {
            "prefetch": 8, "threads": None, "window": 256, "max_gap": 1 << 20, "max_read": 64 << 20,
            "ahead_bytes": 64 << 20})
        self.assertEqual(ReadSettings().reading_threads, 8)
        self.assertEqual(ReadSettings(prefetch=3).reading_threads, 3)
        self.assertEqual(ReadSettings(prefetch=32).reading_threads, 8)

    def test_a_wrong_field_is_one_sentence_naming_it(self):
        cases = [
            (JobSettings, dict(batch_size=0), "batch_size must be a positive integer, not 0."),
            (JobSettings, dict(partition="rank"), "partition must be 'node', 'global' or 'auto', not 'rank'."),
            (JobSettings, dict(mix_fraction=-0.1), "mix_fraction must be a number from 0 to 1, not -0.1."),
            (ReadSettings, dict(prefetch=0), "prefetch must be a positive integer, not 0."),
            (ReadSettings, dict(threads=0), "threads must be a positive integer, not 0."),
            (ReadSettings, dict(window="8"), "window must be a positive integer, not '8'."),
            (ReadSettings, dict(max_gap=-1), "max_gap must be a non-negative integer, not -1."),
        ]
        for cls, kwargs, message in cases:
            with self.subTest(cls=cls.__name__, **kwargs):
                with self.assertRaises(ValueError) as e:
                    cls(**kwargs)
                self.assertEqual(str(e.exception), message)

    def test_keywords_replace_the_fields_they_give(self):
        base = ReadSettings(prefetch=4, window=16)
        self.assertEqual(base.with_changes(prefetch=None, window=32), ReadSettings(prefetch=4, window=32))
        self.assertIs(base.with_changes(prefetch=None), base)
        with self.assertRaises(ValueError):
            base.with_changes(window=0)  # checked again

    def test_samples_take_settings_and_keywords(self):
        samples = Samples(None, plan=[], settings=ReadSettings(prefetch=4, window=16), window=32)
        self.assertEqual((samples.prefetch, samples.window, samples.threads), (4, 32, 4))
        self.assertEqual(samples.settings, ReadSettings(prefetch=4, window=32))
        self.assertEqual(Samples(None, plan=[], prefetch=2, threads=1).settings, ReadSettings(prefetch=2, threads=1))


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Records each request's path and JSON body on the server, and answers a registration as the daemon does."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.requests.append((self.path, body))
        answer = json.dumps({"job": body["job"], "registration": "new", "samples": 10, "ranks": 2,
                             "batch_size": body["batch_size"], "steps_per_epoch": 3, "canonical_nodes": 1}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


class RegisterSendsTheSettingsTest(unittest.TestCase):
    def setUp(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        self.server.requests = []
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.client = FerryClient(f"http://127.0.0.1:{self.server.server_address[1]}", access_key="", secret_key="")

    def tearDown(self):
        self.client.close()
        self.server.shutdown()
        self.server.server_close()

    def sent(self):
        self.assertEqual(len(self.server.requests), 1)
        path, body = self.server.requests[0]
        self.assertEqual(path, "/_ferry/v1/jobs")
        return body

    def test_settings_with_a_keyword_beside_them(self):
        settings = JobSettings(seed=7, batch_size=4, partition="node", shuffle_block_shards=2)
        self.client.register_job("j", manifest_key="b/m.json", world=(2, 1, 1), node=1, settings=settings, seed=9)
        self.assertEqual(self.sent(), {"job": "j", "batch_size": 4, "manifest_key": "b/m.json", "seed": 9,
                                       "world": {"nodes": 2, "ranks_per_node": 1, "workers_per_rank": 1}, "node": 1,
                                       "partition": "node", "shuffle_block_shards": 2})

    def test_keywords_alone_send_what_they_always_did(self):
        self.client.register_job("j", manifest_key="b/m.json", seed=3, world=(1, 1, 1), node=0, batch_size=8,
                                 canonical_nodes=4, mix_fraction=0.25)
        self.assertEqual(self.sent(), {"job": "j", "batch_size": 8, "manifest_key": "b/m.json", "seed": 3,
                                       "world": {"nodes": 1, "ranks_per_node": 1, "workers_per_rank": 1}, "node": 0,
                                       "canonical_nodes": 4, "mix_fraction": 0.25})

    def test_the_answer_is_a_dict_and_a_typed_job(self):
        job = self.client.register_job("j", ranks=[["b/k1"], ["b/k2"]], settings=JobSettings(batch_size=2))
        self.assertEqual(self.sent(), {"job": "j", "batch_size": 2, "ranks": [["b/k1"], ["b/k2"]]})
        self.assertIsInstance(job, Job)
        self.assertIsInstance(job, dict)
        self.assertEqual((job.ranks, job["ranks"], job.samples, job.steps_per_epoch, job.registration),
                         (2, 2, 10, 3, "new"))
        self.assertEqual(job.canonical_nodes, 1)
        self.assertIsNone(job.homes)
        self.assertEqual(json.loads(json.dumps(job)), dict(job))  # saved as JSON, as a checkpoint beside the model
        self.assertEqual(pickle.loads(pickle.dumps(job)), job)


class AnswersTest(unittest.TestCase):
    def test_a_checkpoint_reads_both_ways_and_goes_back_as_resume(self):
        saved = Checkpoint({"job": "j", "epoch": 2, "position": 96, "canonical_nodes": 4,
                            "homes": {"nodes": 2, "node_of": [0, 1, 0, 1]}})
        self.assertEqual((saved.epoch, saved.position, saved.canonical_nodes), (2, 96, 4))
        self.assertEqual(saved.homes, saved["homes"])
        self.assertEqual(repr(Checkpoint({"epoch": 1})), "Checkpoint({'epoch': 1})")


if __name__ == "__main__":
    unittest.main()
