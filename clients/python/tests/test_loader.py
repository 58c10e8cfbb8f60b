"""Samples (plan-order reads with read-ahead) against moto's S3 server; StepReporter's batching."""

import random
import unittest
import unittest.mock

from ferry_client import FerryClient, FerryConnectionError, FerryError, Samples, StepReporter, plan_reads
from ferry_client.client import samples_of, spans_of
from ferry_client.loader import reads_ahead

import support

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
        # 20 single objects, for the tests of how deep reads go ahead
        cls.objects = []
        for k in range(20):
            s3.put_object(Bucket=BUCKET, Key=f"obj-{k}", Body=f"object {k}".encode())
            cls.objects.append({"bucket": BUCKET, "key": f"obj-{k}"})
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

    def test_yields_the_plan_in_order_however_it_is_cut_into_reads(self):
        for window, max_gap, max_read in ((1, 1 << 20, 64 << 20), (7, 0, 64 << 20), (256, 1 << 20, 300),
                                          (256, 1 << 20, 64 << 20)):
            with self.subTest(window=window, max_gap=max_gap, max_read=max_read):
                samples = Samples(self.client, plan=self.plan, prefetch=3, window=window, max_gap=max_gap,
                                  max_read=max_read)
                self.assertEqual(list(samples), [s["expected"] for s in self.plan])
        self.assertEqual(len(Samples(self.client, plan=self.plan).reads), 2)  # one per shard

    def test_meta_pairs(self):
        samples = Samples(self.client, plan=self.plan, meta=True)
        self.assertEqual(len(samples), len(self.plan))
        pairs = list(samples)
        self.assertEqual([s["index"] for s, _ in pairs], [s["index"] for s in self.plan])
        self.assertTrue(all(data == sample["expected"] for sample, data in pairs))

    def test_a_failed_read_raises_where_its_sample_would_be(self):
        plan = [*self.plan[:5], {"bucket": BUCKET, "key": "missing.tar", "offset": 0, "length": 4}, *self.plan[5:]]
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

    def test_the_depth_measured_bounds_the_reads_in_flight_and_a_failed_read_still_raises_in_place(self):
        plan = list(self.objects)
        plan[15] = {"bucket": BUCKET, "key": "missing"}
        got = []
        counted = _Submissions(self.client, got)
        # depth 2 once measured: the read needed now and one ahead
        with unittest.mock.patch("ferry_client.loader.reads_ahead", lambda f, b, p: 2), \
                self.assertRaises(FerryError) as caught:
            for data in Samples(counted, plan=plan, prefetch=8):
                got.append(data)
        self.assertEqual(got, [f"object {k}".encode() for k in range(15)])
        self.assertEqual(caught.exception.code, "NoSuchKey")
        # the first 8 go out at once (nothing measured yet); past them, read k goes out once the samples
        # before k - 1 are consumed (with prefetch's 8 it would go out at k - 7)
        for k in range(9, 15):
            self.assertGreaterEqual(counted.consumed_at_start[f"obj-{k}"], k - 1, f"obj-{k}")
        self.assertEqual(counted.consumed_at_start["obj-3"], 0)

    def test_samples_measure_their_reads_as_they_go(self):
        samples = Samples(self.client, plan=self.objects[:12], prefetch=8)
        self.assertEqual(list(samples), [f"object {k}".encode() for k in range(12)])
        self.assertIsNotNone(samples._fetch_s)
        self.assertGreater(samples._fetch_s, 0)

    def test_needs_a_job_or_a_plan(self):
        with self.assertRaises(ValueError):
            Samples(self.client)


class ReadsAheadTest(unittest.TestCase):
    """How many reads Samples keeps submitted, from what it measured: pure, no server."""

    def test_all_of_prefetch_until_both_times_are_measured(self):
        self.assertEqual(reads_ahead(None, None, 8), 8)
        self.assertEqual(reads_ahead(0.2, None, 8), 8)
        self.assertEqual(reads_ahead(None, 0.05, 8), 8)

    def test_reads_slower_than_their_use_keep_many_ahead_within_prefetch(self):
        # cold: a 10 MB read waits 0.2 s on the store, its samples take 0.066 s to use
        self.assertEqual(reads_ahead(0.2, 0.066, 8), 8)
        self.assertEqual(reads_ahead(0.2, 0.066, 4), 4)
        self.assertEqual(reads_ahead(0.1, 0.1, 8), 3)

    def test_reads_faster_than_their_use_keep_one_ahead(self):
        # warm: the same read comes from the daemon's tier in 0.015 s
        self.assertEqual(reads_ahead(0.015, 0.066, 8), 2)
        self.assertEqual(reads_ahead(0.0, 0.066, 8), 2)  # a clock too coarse to see the read: still one ahead
        self.assertEqual(reads_ahead(0.0, 0.066, 1), 1)  # prefetch=1: none ahead, as asked
        self.assertEqual(reads_ahead(0.015, 0.0, 8), 8)  # a consumer that takes no time


class _Submissions:
    """A FerryClient's gets, each with how many samples the consumer had taken when it started."""

    def __init__(self, client, consumed):
        self.client = client
        self.consumed = consumed
        self.consumed_at_start = {}

    def get(self, bucket, key, offset=None, length=None, etag=None):
        self.consumed_at_start[key] = len(self.consumed)
        return self.client.get(bucket, key, offset, length, etag)


def _sample(index, key, offset, length=10, bucket="b", etag="e"):
    return {"index": index, "bucket": bucket, "key": key, "offset": offset, "length": length, "etag": etag}


class PlanReadsTest(unittest.TestCase):
    """How an order becomes requests: pure, no server."""

    def shape(self, reads):
        return [(r.key, r.offset, r.length, r.positions) for r in reads]

    def test_a_span_of_adjacent_samples_is_one_read(self):
        plan = [_sample(0, "a", 20), _sample(1, "a", 0), _sample(2, "a", 10), _sample(3, "b", 0)]
        self.assertEqual(self.shape(plan_reads(plan, window=1)), [("a", 0, 30, [0, 1, 2]), ("b", 0, 10, [3])])

    def test_window_one_reads_each_span_alone_and_a_wider_window_merges_them(self):
        plan = [_sample(0, "a", 0), _sample(1, "b", 0), _sample(2, "a", 10)]
        self.assertEqual(self.shape(plan_reads(plan, window=1)),
                         [("a", 0, 10, [0]), ("b", 0, 10, [1]), ("a", 10, 10, [2])])
        self.assertEqual(self.shape(plan_reads(plan, window=3)), [("a", 0, 20, [0, 2]), ("b", 0, 10, [1])])
        # windows of 2: [a, b] then [a]
        self.assertEqual(self.shape(plan_reads(plan, window=2)),
                         [("a", 0, 10, [0]), ("b", 0, 10, [1]), ("a", 10, 10, [2])])

    def test_a_window_never_cuts_a_span(self):
        plan = [_sample(i, "a", 10 * i) for i in range(5)] + [_sample(5, "b", 0)]
        self.assertEqual(self.shape(plan_reads(plan, window=2)), [("a", 0, 50, [0, 1, 2, 3, 4]), ("b", 0, 10, [5])])

    def test_a_wide_hole_or_a_long_read_splits(self):
        plan = [_sample(0, "a", 0), _sample(1, "a", 100), _sample(2, "a", 115)]
        self.assertEqual(self.shape(plan_reads(plan, max_gap=50)), [("a", 0, 10, [0]), ("a", 100, 25, [1, 2])])
        self.assertEqual(self.shape(plan_reads(plan, max_gap=90)), [("a", 0, 125, [0, 1, 2])])
        self.assertEqual(self.shape(plan_reads(plan, max_read=20)),
                         [("a", 0, 10, [0]), ("a", 100, 10, [1]), ("a", 115, 10, [2])])

    def test_other_versions_and_whole_objects_are_read_apart(self):
        plan = [_sample(0, "a", 0), _sample(1, "a", 10, etag="f"), {"bucket": "b", "key": "w"},
                {"bucket": "b", "key": "w"}]
        self.assertEqual(self.shape(plan_reads(plan)),
                         [("a", 0, 10, [0]), ("a", 10, 10, [1]), ("w", None, None, [2]), ("w", None, None, [3])])

    def test_spans_cut_and_join_back(self):
        plan = [_sample(0, "a", 20), _sample(1, "a", 0), _sample(2, "b", 0), _sample(3, "a", 50)]
        spans = spans_of(plan)
        self.assertEqual([(s["key"], s["offset"], s["length"], len(s["samples"])) for s in spans],
                         [("a", 0, 30, 2), ("b", 0, 10, 1), ("a", 50, 10, 1)])
        self.assertEqual(samples_of(spans), plan)

    def test_bad_window(self):
        with self.assertRaises(ValueError):
            plan_reads([], window=0)


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

    def test_a_report_covers_the_consumers_own_time_and_a_failed_one_leaves_it_to_the_next(self):
        reporter = self.reporter(max_steps=2)
        self.clock.now += 0.3  # the epoch's first batch takes a while: counted from the epoch's start here
        reporter.step(300.0)
        self.assertAlmostEqual(reporter.pending()["elapsed_s"], 0.3)
        self.clock.now += 0.1
        with self.assertLogs("ferry_client", "WARNING"):
            reporter.step(50.0)  # due by count: fails (no daemon), so its time goes with the next report
        self.clock.now += 2.0
        with self.assertLogs("ferry_client", "WARNING"):
            reporter.step(10.0)  # past the back-off: tried again, fails again
        pending = reporter.pending()
        self.assertAlmostEqual(pending["elapsed_s"], 2.4)
        self.assertLessEqual(sum(pending["waits_ms"]) / 1000.0, pending["elapsed_s"])

    def test_the_epoch_is_timed_from_its_first_batch_and_announced_before_it(self):
        reporter = StepReporter(self.client, "job", rank=0, epoch=1, batch_size=2, clock=self.clock)
        self.clock.now += 5.0  # set-up after the reporter was made (imports, a DataLoader's workers): not the loader's

        def batches():
            self.clock.now += 0.2
            yield [1, 2]

        for _ in reporter.timed(batches(), count=len):
            pass
        self.assertAlmostEqual(reporter.pending()["elapsed_s"], 0.2)
        self.assertEqual(reporter.reports_failed, 0, "epoch 1 from its start was begun by registering: nothing to announce")
        later = self.reporter()  # epoch 3: the daemon is told before the first batch is read (here it is not there)
        with self.assertLogs("ferry_client", "WARNING") as logged:
            for _ in later.timed(iter([]), count=len):
                pass
        self.assertIn("epoch 3 began", logged.output[0])
        self.assertEqual(later.reports_failed, 1)

    def test_the_end_of_the_epoch_is_not_a_step(self):
        reporter = self.reporter()
        with self.assertRaises(StopIteration), reporter.wait():
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
