"""Samples (plan-order reads with read-ahead) against moto's S3 server; StepReporter's batching."""

import random
import unittest

import support
from ferry_client import FerryClient, FerryConnectionError, FerryError, Samples, StepReporter

BUCKET = "ferry-loader"


class SamplesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = support.MotoServer()
        s3 = cls.server.boto3()
        s3.create_bucket(Bucket=BUCKET)
        # Two "shards" of 50 samples each, each sample a recognisable run of bytes of its own length.
        cls.plan = []
        for shard in range(2):
            blob, offset = b"", 0
            for i in range(50):
                index = shard * 50 + i
                data = (f"sample-{index:03d};".encode() * (index % 7 + 1))
                cls.plan.append({"index": index, "bucket": BUCKET, "key": f"shard-{shard}.tar",
                                 "offset": offset, "length": len(data), "expected": data})
                blob += data
                offset += len(data)
            s3.put_object(Bucket=BUCKET, Key=f"shard-{shard}.tar", Body=blob)
            etag = s3.head_object(Bucket=BUCKET, Key=f"shard-{shard}.tar")["ETag"]
            for sample in cls.plan[shard * 50:]:
                sample["etag"] = etag
        random.Random(7).shuffle(cls.plan)  # a plan order, as the daemon would give it
        cls.client = FerryClient(cls.server.url, "testing", "testing")

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()

    def test_yields_the_plan_in_order(self):
        for prefetch in (1, 3, 16):
            with self.subTest(prefetch=prefetch):
                got = list(Samples(self.client, plan=self.plan, prefetch=prefetch))
                self.assertEqual(got, [s["expected"] for s in self.plan])

    def test_meta_pairs(self):
        samples = Samples(self.client, plan=self.plan, meta=True)
        self.assertEqual(len(samples), len(self.plan))
        pairs = list(samples)
        self.assertEqual([s["index"] for s, _ in pairs], [s["index"] for s in self.plan])
        self.assertTrue(all(data == sample["expected"] for sample, data in pairs))

    def test_a_failed_read_raises_where_its_sample_would_be(self):
        plan = self.plan[:5] + [{"bucket": BUCKET, "key": "missing.tar", "offset": 0, "length": 4}] + self.plan[5:]
        got = []
        with self.assertRaises(FerryError) as caught:
            for data in Samples(self.client, plan=plan, prefetch=4):
                got.append(data)
        self.assertEqual(got, [s["expected"] for s in self.plan[:5]])
        self.assertEqual(caught.exception.code, "NoSuchKey")

    def test_a_changed_object_fails_instead_of_mixing_versions(self):
        plan = [dict(self.plan[0], etag='"0123456789abcdef0123456789abcdef"')]
        with self.assertRaises(FerryError) as caught:
            list(Samples(self.client, plan=plan))
        self.assertEqual(caught.exception.status, 412)

    def test_stopping_early_is_clean(self):
        it = iter(Samples(self.client, plan=self.plan, prefetch=8))
        self.assertEqual(next(it), self.plan[0]["expected"])
        it.close()  # cancels the reads ahead

    def test_needs_a_job_or_a_plan(self):
        with self.assertRaises(ValueError):
            Samples(self.client)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class StepReporterTest(unittest.TestCase):
    """Batching, position and failure handling, with a daemon that is not there (a closed port)."""

    def setUp(self):
        self.clock = Clock()
        self.client = FerryClient(f"http://127.0.0.1:{support.free_port()}", access_key="", secret_key="",
                                  timeout=2)

    def reporter(self, **kw):
        kw.setdefault("batch_size", 32)
        kw.setdefault("ranks", 4)
        return StepReporter(self.client, "job", rank=1, epoch=3, clock=self.clock, **kw)

    def test_no_request_before_a_report_is_due(self):
        reporter = self.reporter()
        for _ in range(63):
            reporter.step(1.5)
        self.assertEqual((reporter.reports_sent, reporter.reports_failed), (0, 0))
        pending = reporter.pending()
        self.assertEqual(pending["waits_ms"], [1.5] * 63)
        self.assertEqual(pending["samples"], 63 * 32)
        self.assertEqual(pending["position"], 63 * 32 * 4)  # ranks step together
        self.assertEqual((pending["rank"], pending["epoch"]), (1, 3))

    def test_the_64th_step_sends(self):
        reporter = self.reporter()
        for _ in range(63):
            reporter.step(1.0)
        with self.assertLogs("ferry_client", "WARNING"):
            reporter.step(1.0)
        self.assertEqual(reporter.reports_failed, 1)
        self.assertIsInstance(reporter.last_error, FerryConnectionError)
        self.assertEqual(len(reporter.pending()["waits_ms"]), 64)  # kept for the next report

    def test_half_a_second_sends(self):
        reporter = self.reporter()
        reporter.step(2.0)
        self.clock.now += 0.49
        reporter.step(2.0)
        self.assertEqual(reporter.reports_failed, 0)
        self.clock.now += 0.02
        with self.assertLogs("ferry_client", "WARNING"):
            reporter.step(2.0)
        self.assertEqual(reporter.reports_failed, 1)

    def test_backs_off_after_a_failure(self):
        reporter = self.reporter(max_steps=1)
        with self.assertLogs("ferry_client", "WARNING"):
            reporter.step(1.0)
        for _ in range(100):  # every step is "due" by count, but the back-off holds
            reporter.step(1.0)
        self.assertEqual(reporter.reports_failed, 1)
        self.clock.now += 1.01  # 0.5 s * 2
        with self.assertLogs("ferry_client", "WARNING"):
            reporter.step(1.0)
        self.assertEqual(reporter.reports_failed, 2)
        self.assertEqual(len(reporter.pending()["waits_ms"]), 102)

    def test_wait_measures_the_block_and_counts_partial_batches(self):
        reporter = self.reporter()
        with reporter.wait():
            self.clock.now += 0.25
        with reporter.wait() as step:
            self.clock.now += 0.01
            step.samples = 5
        pending = reporter.pending()
        self.assertEqual([round(w, 6) for w in pending["waits_ms"]], [250.0, 10.0])
        self.assertEqual(pending["samples"], 37)

    def test_timed_measures_only_the_wait_for_each_batch(self):
        reporter = self.reporter()
        clock = self.clock

        def batches():
            for size in (32, 32, 7):
                clock.now += 0.002  # the loader takes 2 ms per batch
                yield list(range(size))

        for _ in reporter.timed(batches(), count=len):
            clock.now += 0.1  # training, not waiting (and under the 0.5 s that would send a report)
        pending = reporter.pending()
        self.assertEqual(reporter.steps, 3)
        self.assertEqual([round(w, 6) for w in pending["waits_ms"]], [2.0, 2.0, 2.0])
        self.assertEqual(pending["samples"], 71)
        self.assertEqual(pending["position"], 71 * 4)

    def test_the_end_of_the_epoch_is_not_a_step(self):
        reporter = self.reporter()
        with self.assertRaises(StopIteration):
            with reporter.wait():
                next(iter([]))
        self.assertEqual(reporter.steps, 0)
        self.assertIsNone(reporter.pending())

    def test_explicit_position(self):
        reporter = self.reporter(start=1000)
        reporter.step(1.0)
        self.assertEqual(reporter.pending()["position"], 1000 + 32 * 4)
        with reporter.wait() as step:
            step.position = 5000
        self.assertEqual(reporter.pending()["position"], 5000)

    def test_close_raises_when_the_last_report_fails(self):
        reporter = self.reporter()
        reporter.step(1.0)
        with self.assertRaises(FerryConnectionError) as caught:
            reporter.close()
        self.assertIn("cannot talk to", str(caught.exception))

    def test_nothing_pending_sends_nothing(self):
        reporter = self.reporter()
        reporter.close()
        self.assertEqual((reporter.reports_sent, reporter.reports_failed), (0, 0))


if __name__ == "__main__":
    unittest.main()
