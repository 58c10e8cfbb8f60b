package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.ferry.cache.BlockId;
import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.World;
import dev.ferry.store.ByteRange;
import dev.ferry.store.ObjectKey;
import dev.ferry.time.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jobs of one node, driven directly: registration (new, existing, refused, replaced, abandoned), what a resumed job
 * starts from, the per-job gauges, the history one sample a second, and who read a block last epoch, which the
 * registry answers for the node ({@link dev.ferry.serve.node.BlockHolders}). A real node over a folder store, on a
 * manual clock.
 */
class JobRegistryTest {
    @Test
    void register_aNewJob_startsItInEpochOneUnderItsName(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            JobRegistry.Registration r = n.jobs.register(n.job("train", 7), false);

            assertThat(r.outcome()).isEqualTo(JobRegistry.Outcome.NEW);
            assertThat(n.jobs.jobs()).containsOnlyKeys("train").containsEntry("train", r.run());
            assertThat(r.run().current().number).isEqualTo(1);
            assertThat(r.run().plannedBlocks()).as("epoch 1's block reads on this node, all of them on one node")
                    .isEqualTo(r.run().job.nodeFuture(1, JobsNode.BLOCK).blocks().size()).isPositive();
        }
    }

    @Test
    void register_theSameJobAgain_findsTheRunningOneAndKeepsItsProgress(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob first = n.jobs.register(n.job("train", 7), false).run();
            first.progress(2, 8, 8, new double[] {1.0});

            JobRegistry.Registration again = n.jobs.register(n.job("train", 7), false); // another rank, an equal job

            assertThat(again.outcome()).isEqualTo(JobRegistry.Outcome.EXISTING);
            assertThat(again.run()).isSameAs(first);
            assertThat(again.run().current().number).as("still in the epoch its consumers reported").isEqualTo(2);
            assertThat(again.run().job.epochs).hasSize(2);
        }
    }

    @Test
    void register_aDifferentJobUnderATakenName_isRefusedNamingWhatDiffers(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob running = n.jobs.register(n.job("train", 7), false).run();

            assertThatThrownBy(() -> n.jobs.register(n.job("train", 8), false))
                    .isInstanceOfSatisfying(JobRegistry.ConflictException.class,
                            e -> assertThat(e.differences()).containsExactly("seed 7 here, 8 asked"))
                    .hasMessageStartingWith("job 'train' is already registered on this daemon with other arguments: seed 7 here, 8 asked.")
                    .hasMessageContaining("pass replace");
            assertThat(n.jobs.jobs()).containsOnlyKeys("train").containsEntry("train", running);
        }
    }

    @Test
    void register_withReplace_startsTheNewJobAndStopsTheOld(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir, Map.of("prefetch-bytes", "1MiB"))) {
            RunningJob old = n.jobs.register(n.job("train", 7), false).run();
            assertThat(old.prefetchStats()).as("prefetch is on").isNotNull();

            JobRegistry.Registration r = n.jobs.register(n.job("train", 8), true);

            assertThat(r.outcome()).isEqualTo(JobRegistry.Outcome.REPLACED);
            assertThat(r.run()).isNotSameAs(old);
            assertThat(n.jobs.jobs()).containsOnlyKeys("train").containsEntry("train", r.run());
            assertThat(old.prefetchStats()).as("the replaced job's prefetcher is closed").isNull();
            assertThat(r.run().prefetchStats()).isNotNull();
        }
    }

    @Test
    void register_withReplace_ofAnIdenticalJob_keepsItRunning(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob first = n.jobs.register(n.job("train", 7));

            assertThat(n.jobs.register(n.job("train", 7), true))
                    .isEqualTo(new JobRegistry.Registration(first, JobRegistry.Outcome.EXISTING));
        }
    }

    @Test
    void register_whoseClientHasGone_registersNothingAndTheJobItWouldReplaceRunsOn(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            assertThatThrownBy(() -> n.jobs.register(n.job("fresh", 7), false, () -> true)).isInstanceOf(CancellationException.class);
            assertThat(n.jobs.jobs()).isEmpty();

            RunningJob running = n.jobs.register(n.job("train", 7));
            assertThatThrownBy(() -> n.jobs.register(n.job("train", 8), true, () -> true)).isInstanceOf(CancellationException.class);
            assertThat(n.jobs.jobs()).containsOnlyKeys("train").containsEntry("train", running);
            assertThat(running.job.differences(n.job("train", 7))).as("the seed-7 job still runs").isEmpty();
        }
    }

    @Test
    void register_waitingForAnotherToBePlanned_stopsWaitingWhenItsClientGoes(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            CountDownLatch planning = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            ClientGone slow = () -> { // the first registration's plan takes as long as the test says
                planning.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return false;
            };
            CompletableFuture<JobRegistry.Registration> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return n.jobs.register(n.job("first", 1), false, slow);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(planning.await(30, TimeUnit.SECONDS)).isTrue();

            assertThatThrownBy(() -> n.jobs.register(n.job("second", 2), false, () -> true)).isInstanceOf(CancellationException.class);

            release.countDown();
            assertThat(first.get(30, TimeUnit.SECONDS).outcome()).isEqualTo(JobRegistry.Outcome.NEW);
            assertThat(n.jobs.jobs()).containsOnlyKeys("first");
        }
    }

    @Test
    void register_aResumedJob_startsInItsCheckpointsEpochAtItsPosition(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            Job resumed = Job.planned("train", n.manifest(), PlanConfig.DEFAULT.withSeed(7).withPartition(PlanConfig.Partition.NODE),
                    new World(1, 4, 1), 0, 4, new Job.Resume(CanonicalHomes.of(1, 1), 3, 40, null));

            RunningJob run = n.jobs.register(resumed, false).run();

            assertThat(run.current().number).isEqualTo(3);
            assertThat(run.current().position).isEqualTo(40);
            assertThat(run.blockPosition()).as("eviction and prefetch start at the checkpoint: step 10 of 4 ranks")
                    .isEqualTo(resumed.nodeFuture(3, JobsNode.BLOCK).indexOfPosition(40, 4)).isPositive();
            assertThat(resumed.epochs).extracting(e -> e.number).containsExactly(3);
        }
    }

    @Test
    void register_publishesTheJobsGauges(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob run = n.jobs.register(n.job("train", 7));

            // a cold tier that holds the whole dataset: epoch 1 reads every byte of it from the store once
            assertThat(gauge(n, "ferry.job.predicted.egress", "train")).isEqualTo(n.manifest().totalBytes())
                    .isEqualTo(run.advice.predictedEgress(1));
            assertThat(gauge(n, "ferry.job.egress", "train")).isZero();
            assertThat(gauge(n, "ferry.job.findings", "train")).isZero();
        }
    }

    @Test
    void sample_setsEachJobsEgressGaugeToItsEpochsEgressSoFar(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            n.jobs.register(n.job("train", 7));
            n.node.stack().cache().readBytes(ObjectKey.of("data", "shard-0.bin"), new ByteRange(0, JobsNode.BLOCK));

            n.jobs.sample();

            assertThat(gauge(n, "ferry.job.egress", "train")).as("one block fetched from the store").isEqualTo(JobsNode.BLOCK);
        }
    }

    @Test
    void sample_recordsOnePointPerSecondOfWhatConsumersReported(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            RunningJob run = n.jobs.register(n.job("train", 7));
            n.jobs.sample(); // the first sample only sets where the history counts from
            assertThat(n.jobs.history().points()).isEmpty();

            n.clock.advanceMillis(2000);
            run.progress(1, 16, 16, new double[] {2.0, 4.0});
            n.jobs.sample();

            History.Point p = n.jobs.history().points().getFirst();
            assertThat(p.t()).as("seconds since the registry started").isEqualTo(2.0);
            assertThat(p.samplesPerSecond()).isEqualTo(8.0);
            assertThat(p.waitP50Millis()).isCloseTo(2.0, within(0.02));
            assertThat(p.waitP99Millis()).isCloseTo(4.0, within(0.04));
            assertThat(p.hitRate()).as("no block read: no hit rate").isNaN();
            assertThat(p.egressBytesPerSecond()).isZero();
        }
    }

    @Test
    void sample_keepsTheLastFiveMinutesOfHistory(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            n.jobs.sample();
            for (int s = 1; s <= 305; s++) {
                n.clock.advanceMillis(1000);
                n.jobs.sample();
            }

            List<History.Point> points = n.jobs.history().points();
            assertThat(points).hasSize(300);
            assertThat(points.getFirst().t()).isEqualTo(6.0);
            assertThat(points.getLast().t()).isEqualTo(305.0);
        }
    }

    @Test
    void holderOf_outsideARegionalGroup_isNobody(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir)) {
            Job job = n.job("train", PlanConfig.DEFAULT.withSeed(7).withPartition(PlanConfig.Partition.GLOBAL), new World(2, 2, 1), 0);
            RunningJob run = n.jobs.register(job);
            run.progress(2, 0, 0, new double[0]);

            assertThat(run.hints()).isZero();
            assertThat(job.nodeFuture(2, JobsNode.BLOCK).blocks()).allSatisfy(b -> assertThat(n.jobs.holderOf(b)).isNull());
        }
    }

    @Test
    void holderOf_inARegionalGroup_namesTheMemberWhoseNodeReadTheBlockLastEpoch(@TempDir Path dir) throws Exception {
        String self = "http://127.0.0.1:1";
        String other = "http://127.0.0.1:2";
        // a static group of two whose members are, in order, the job's nodes; this node is node 0
        try (JobsNode n = JobsNode.start(dir, Map.of("group", self + "," + other, "self", self, "group-probe", "0s"))) {
            n.manifest(); // written and looked up before the group forms: the peer is never asked
            n.node.joinGroup(1);
            Job job = n.job("train", PlanConfig.DEFAULT.withSeed(7).withPartition(PlanConfig.Partition.GLOBAL), new World(2, 2, 1), 0);
            RunningJob run = n.jobs.register(job);
            List<BlockId> mine = job.nodeFuture(2, JobsNode.BLOCK).blocks();
            assertThat(mine).allSatisfy(b -> assertThat(n.jobs.holderOf(b)).as("epoch 1 has no last epoch").isNull());

            run.progress(2, 0, 0, new double[0]);
            Set<BlockId> readByTheOther = new HashSet<>(job.nodeFuture(1, JobsNode.BLOCK, 1).blocks());
            Set<BlockId> hinted = new HashSet<>(mine);
            hinted.retainAll(readByTheOther);
            assertThat(hinted).as("the global plan deals the shards anew each epoch").isNotEmpty();
            Await.until("epoch 2's hints", Duration.ofSeconds(30), () -> run.hints() == hinted.size());

            assertThat(mine).allSatisfy(b -> assertThat(n.jobs.holderOf(b)).isEqualTo(hinted.contains(b) ? other : null));
            assertThat(n.jobs.holderOf(new BlockId(ObjectKey.of("data", "not-planned.bin"), "e", 0))).isNull();
        }
    }

    @Test
    void stopAll_closesEveryJobsPrefetcher(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir, Map.of("prefetch-bytes", "1MiB"))) {
            RunningJob a = n.jobs.register(n.job("a", 1));
            RunningJob b = n.jobs.register(n.job("b", 2));
            assertThat(List.of(a, b)).allSatisfy(r -> assertThat(r.prefetchStats()).isNotNull());

            n.jobs.stopAll();

            assertThat(List.of(a, b)).allSatisfy(r -> assertThat(r.prefetchStats()).isNull());
        }
    }

    private static double gauge(JobsNode n, String name, String job) {
        return n.registry.get(name).tag("job", job).gauge().value();
    }
}
