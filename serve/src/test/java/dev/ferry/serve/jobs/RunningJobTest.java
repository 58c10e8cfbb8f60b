package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.World;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.Prices;
import dev.ferry.store.chain.MeteredStore;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One registered job at run time, driven directly: the epoch and position its consumers report, what each epoch's
 * record adds up, the loader's meters, and what stopping it releases. A real node over a folder store, on a manual
 * clock; the job is 128 samples on one node of four ranks.
 */
class RunningJobTest {
    @Test
    void startEpoch_recordsTheEpochAndPlansThisNodesBlocks(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            Job job = n.job("train", 7);

            RunningJob run = n.run(job);

            assertThat(run.current().number).isEqualTo(1);
            assertThat(run.current().startNanos).isEqualTo(n.clock.nanoTime());
            assertThat(run.current().atEnd).isNull();
            assertThat(run.plannedBlocks()).isEqualTo(job.nodeFuture(1, JobsNode.BLOCK).blocks().size())
                    .as("a 1 KiB sample inside one 4 KiB block: a block read per sample").isEqualTo(128);
            assertThat(run.blockPosition()).isZero();
            assertThat(job.epochs).containsExactly(run.current());
        }
    }

    @Test
    void samplesPerSecondAndWaitShare_areByTheConsumersClocks_neverOverTheirTime_andASilentRankIsShownSo(@TempDir Path dir)
            throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob run = n.run(n.job("train", 7));
            // the daemon hears of the epoch late (the first report comes after steps the consumer timed before it):
            // by the daemon's clock the epoch would be 0.5 s long; by rank 0's and rank 2's, 2 s
            n.clock.advanceMillis(500);
            run.progress(1, 64, 32, new double[] {400, 400, 400}, 0, 1.5);
            run.progress(1, 64, 32, new double[] {100}, 2, 2.0);
            n.clock.advanceMillis(1);
            run.progress(1, 64, 0, new double[] {500}, 0, 0.5);

            EpochRecord e = run.current();
            var r = JobAdvice.report(e, e.atStart, -1, 1, Prices.AWS_S3_STANDARD);
            assertThat(e.consumerSeconds()).as("the longest rank's own time").isEqualTo(2.0);
            assertThat(r.samplesPerSecond()).as("64 samples in 2 s of the consumers' time, not 0.5 s of the daemon's").isEqualTo(32.0);
            assertThat(r.waitShare()).as("1.8 s waited in 4 s of the ranks' time").isCloseTo(1.8 / 4.0, within(1e-9));
            assertThat(e.ranks()).isEqualTo(4);
            assertThat(e.ranksReported()).as("ranks 1 and 3 said nothing").isEqualTo(2);

            // a client that says nothing of its clock: the daemon's, with the share never over the ranks' time
            RunningJob old = n.run(n.job("old", 7));
            n.clock.advanceMillis(100);
            old.progress(1, 8, 8, new double[] {300, 300});
            var o = JobAdvice.report(old.current(), old.current().atStart, -1, 1, Prices.AWS_S3_STANDARD);
            assertThat(old.current().consumerSeconds()).isNaN();
            assertThat(o.waitShare()).as("600 ms waited in a 100 ms epoch is at most all of it").isEqualTo(1.0);
        }
    }

    @Test
    void theFirstEpochsPrediction_countsNoEgressForWhatTheTierHoldsAtRegistration(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            Job cold = n.job("cold", 7);
            RunningJob first = n.run(cold);
            assertThat(first.advice.predictedEgress(1)).as("a cold tier: the whole dataset").isEqualTo((long) JobsNode.SHARDS * JobsNode.SHARD_BYTES);
            first.stop();
            // the dataset read through the node before the job (as `ferry index` through the daemon reads it): all here now
            for (int i = 0; i < JobsNode.SHARDS; i++) {
                n.node.stack().cache().readBytes(ObjectKey.of("data", "shard-" + i + ".bin"), null);
            }
            RunningJob warm = n.run(n.job("warm", 7));
            assertThat(warm.advice.predictedEgress(1)).as("every block of epoch 1 is in the tier already").isZero();
        }
    }

    @Test
    void progress_inTheCurrentEpoch_movesThePositionOnlyForward(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob run = n.run(n.job("train", 7));

            run.progress(1, 40, 0, new double[0]);
            run.progress(1, 20, 0, new double[0]); // a rank that reports late

            assertThat(run.current().position).isEqualTo(40);
            assertThat(run.blockPosition()).as("step 10 of four ranks, a block each").isEqualTo(40);
        }
    }

    @Test
    void progress_addsUpSamplesStepsAndWaitsOfTheEpoch(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob run = n.run(n.job("train", 7));

            n.clock.advanceMillis(500);
            run.progress(1, 8, 8, new double[] {1.0, 3.0});
            n.clock.advanceMillis(500);
            run.progress(1, 12, 4, new double[] {2.0});

            EpochRecord e = run.current();
            assertThat(e.samples).isEqualTo(12);
            assertThat(e.steps).isEqualTo(3);
            assertThat(e.waitTotalMicros).isEqualTo(6000);
            assertThat(e.waits.getValueAtPercentile(50) / 1000.0).isCloseTo(2.0, within(0.02));
            assertThat(e.lastReportNanos - e.startNanos).as("the last report, a second in").isEqualTo(1_000_000_000L);
        }
    }

    @Test
    void progress_feedsEveryStepAndSampleToTheLoadersMeters(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob run = n.run(n.job("train", 7));

            run.progress(1, 10, 10, new double[] {1.0, 2.0, 3.0}); // batches of 4, 4 and 2: the epoch's last is short

            assertThat(n.registry.get("ferry.loader.samples").counter().count()).isEqualTo(10);
            assertThat(n.registry.get("ferry.loader.wait").timer().count()).isEqualTo(3);
            assertThat(n.registry.get("ferry.loader.wait").timer().totalTime(java.util.concurrent.TimeUnit.MICROSECONDS)).isEqualTo(6000);
        }
    }

    @Test
    void progress_forALaterEpoch_startsItAndEndsTheOneBefore(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            Job job = n.job("train", 7);
            RunningJob run = n.run(job);
            run.progress(1, 128, 128, new double[] {1.0});
            EpochRecord first = run.current();

            n.clock.advanceMillis(1000);
            run.progress(2, 8, 8, new double[] {1.0});

            assertThat(run.current().number).isEqualTo(2);
            assertThat(run.current().position).isEqualTo(8);
            assertThat(run.current().samples).isEqualTo(8);
            assertThat(first.atEnd).as("epoch 1's counters end where epoch 2's start").isSameAs(run.current().atStart);
            assertThat(first.samples).isEqualTo(128);
            assertThat(run.blockPosition()).isEqualTo(job.nodeFuture(2, JobsNode.BLOCK).indexOfPosition(8, 4));
            assertThat(job.epochs).extracting(e -> e.number).containsExactly(1, 2);
        }
    }

    @Test
    void progress_forAnEpochLeftBehind_addsOnlyItsSamplesAndWaits(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob run = n.run(n.job("train", 7));
            EpochRecord first = run.current();
            run.progress(2, 8, 8, new double[] {1.0});

            run.progress(1, 128, 5, new double[] {4.0}); // a slow rank finishing epoch 1

            assertThat(run.current().number).isEqualTo(2);
            assertThat(run.current().position).isEqualTo(8);
            assertThat(run.current().samples).isEqualTo(8);
            assertThat(first.samples).isEqualTo(5);
            assertThat(first.steps).isEqualTo(1);
            assertThat(first.position).as("a record left behind keeps its position").isZero();
        }
    }

    @Test
    void progress_forAnEpochThisJobNeverRan_changesNothing(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            Job resumed = Job.planned("train", n.manifest(), PlanConfig.DEFAULT.withSeed(7).withPartition(PlanConfig.Partition.NODE),
                    new World(1, 4, 1), 0, 4, new Job.Resume(CanonicalHomes.of(1, 1), 3, 0, null));
            RunningJob run = n.run(resumed);

            run.progress(2, 64, 64, new double[] {1.0, 1.0});

            assertThat(resumed.epochs).extracting(e -> e.number).containsExactly(3);
            assertThat(run.current().samples).isZero();
            assertThat(n.registry.get("ferry.loader.samples").counter().count()).isZero();
        }
    }

    @Test
    void startEpoch_whenTheClientHasGone_changesNothing(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob run = n.run(n.job("train", 7));
            run.progress(1, 40, 40, new double[] {1.0});

            assertThatThrownBy(() -> run.startEpoch(2, () -> true)).isInstanceOf(CancellationException.class);

            assertThat(run.current().number).isEqualTo(1);
            assertThat(run.current().atEnd).isNull();
            assertThat(run.blockPosition()).isEqualTo(40);
            assertThat(run.job.epochs).hasSize(1);
        }
    }

    @Test
    void stop_releasesTheManifestsVersions_soReadsAskTheStoreAgain(@TempDir Path dir) throws Exception {
        // metadata-ttl 0: a HEAD of an object no job vouches for asks the store every time
        try (JobsNode n = JobsNode.start(dir, Map.of("metadata-ttl", "0s"))) {
            ObjectKey key = n.manifest().shards().getFirst().key();
            RunningJob run = n.run(n.job("train", 7));
            long before = heads(n);
            n.node.stack().cache().head(key);
            assertThat(heads(n) - before).as("a version the running job's manifest pins").isZero();

            run.stop();

            n.node.stack().cache().head(key);
            assertThat(heads(n) - before).as("after the job stopped").isEqualTo(1);
        }
    }

    @Test
    void stop_closesThePrefetcher_andALaterEpochStartsNone(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir, Map.of("prefetch-bytes", "1MiB"))) {
            RunningJob run = n.run(n.job("train", 7));
            assertThat(run.prefetchStats()).isNotNull();

            run.stop();
            run.progress(2, 0, 0, new double[0]); // a consumer still reporting

            assertThat(run.current().number).isEqualTo(2);
            assertThat(run.prefetchStats()).isNull();
        }
    }

    @Test
    void aJobWithoutPrefetch_hasNoPrefetcher(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) { // prefetch-bytes 0
            assertThat(n.run(n.job("train", 7)).prefetchStats()).isNull();
        }
    }

    private static long heads(JobsNode n) {
        return n.node.stack().meter().snapshot().requests(MeteredStore.Op.HEAD);
    }
}
