package dev.ferry.loader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.plan.EpochPlan;
import dev.ferry.plan.CanonicalHomes;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.Placement;
import dev.ferry.plan.PlacementTest;
import dev.ferry.plan.Shard;
import dev.ferry.plan.World;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.time.Await;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoaderTest {
    @TempDir
    Path tmp;
    FileObjectStore store;
    Manifest manifest;

    /** Writes shards whose samples carry their global id, so every delivered sample can be checked. */
    static Manifest writeDataset(FileObjectStore store, int shards, int samplesPerShard, int payload) throws IOException {
        store.createBucket("data");
        Random random = new Random(1);
        List<Shard> list = new ArrayList<>();
        int id = 0;
        for (int s = 0; s < shards; s++) {
            Map<String, Map<String, byte[]>> samples = new LinkedHashMap<>();
            int count = samplesPerShard + (s % 3); // uneven shards
            for (int i = 0; i < count; i++) {
                byte[] body = new byte[payload + random.nextInt(payload)];
                random.nextBytes(body);
                ByteBuffer.wrap(body).putInt(0, id);
                Map<String, byte[]> fields = new LinkedHashMap<>();
                fields.put("jpg", body);
                fields.put("cls", Integer.toString(id % 10).getBytes(StandardCharsets.UTF_8));
                samples.put(String.format("%06d", id), fields);
                id++;
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            List<Long> offsets = TarShards.write(out, samples);
            ObjectKey key = ObjectKey.of("data", String.format("train/shard-%05d.tar", s));
            ObjectMeta meta = store.put(key, PutBody.ofBytes(out.toByteArray()));
            assertThat(TarShards.index(new ByteArrayInputStream(out.toByteArray()))).isEqualTo(offsets);
            list.add(new Shard(key, meta.size(), meta.etag(), count, offsets));
        }
        return new Manifest(list);
    }

    @BeforeEach
    void setUp() throws IOException {
        store = new FileObjectStore(tmp.resolve("origin"));
        manifest = writeDataset(store, 6, 10, 2000);
    }

    static int idOf(Sample s) {
        return ByteBuffer.wrap(s.fields().get("jpg")).getInt(0);
    }

    @Test
    void oneRank_readsEverySampleOnce_inPlanOrder_withItsFields() {
        PlanConfig plan = PlanConfig.DEFAULT.withSeed(3);
        Loader<Sample> loader = new Loader<>(store, manifest, plan, World.single(), 0, LoaderConfig.DEFAULT.withBatchSize(7), Decoder.identity());
        List<Integer> got = new ArrayList<>();
        try (EpochRun<Sample> run = loader.epoch(2)) {
            while (run.hasNext()) {
                Batch<Sample> b = run.next();
                assertThat(b.samples().size()).isBetween(1, 7);
                for (Sample s : b.samples()) {
                    got.add(idOf(s));
                    assertThat(s.key()).isEqualTo(String.format("%06d", idOf(s)));
                    assertThat(new String(s.fields().get("cls"), StandardCharsets.UTF_8)).isEqualTo(Integer.toString(idOf(s) % 10));
                }
            }
            assertThat(run.stats().samples()).isEqualTo(manifest.totalSamples());
            assertThat(run.stats().steps()).isEqualTo((manifest.totalSamples() + 6) / 7);
        }
        EpochPlan p = EpochPlan.of(manifest, plan.forWorld(World.single()), 2);
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < p.size(); i++) {
            expected.add(p.sampleAt(i));
        }
        assertThat(got).isEqualTo(expected);
    }

    @Test
    void fromTorchrunsEnvironment_theFourRanksOfTwoNodesReadTheEpochOnce() {
        PlanConfig plan = PlanConfig.DEFAULT.withSeed(4).withUneven(PlanConfig.Uneven.DROP);
        Set<Integer> seen = new HashSet<>();
        for (int node = 0; node < 2; node++) {
            for (int local = 0; local < 2; local++) {
                Placement p = Placement.fromEnvironment(PlacementTest.torchrun(2, 2, node, local), 1);
                Loader<Sample> l = Loader.forPlacement(store, manifest, plan, p, LoaderConfig.DEFAULT.withBatchSize(3), Decoder.identity());
                try (EpochRun<Sample> run = l.epoch(1)) {
                    while (run.hasNext()) {
                        run.next().samples().forEach(s -> assertThat(seen.add(idOf(s))).as("sample %d once", idOf(s)).isTrue());
                    }
                }
            }
        }
        int total = manifest.totalSamples();
        assertThat(seen).hasSize(total - total % 4);
        // a pod of 8 ranks outside torchrun knows its node, not which rank this process is
        Placement pod = Placement.fromEnvironment(Map.of("PET_NNODES", "2", "PET_NPROC_PER_NODE", "8", "PET_NODE_RANK", "1"), 1);
        assertThatThrownBy(() -> Loader.forPlacement(store, manifest, plan, pod, LoaderConfig.DEFAULT, Decoder.identity()))
                .hasMessageContaining("say node 1 of 2 but not this process's rank");
    }

    @Test
    void checkpoint_thenResumeOnTwoRanks_readsTheRestExactlyOnce() {
        PlanConfig plan = PlanConfig.DEFAULT.withSeed(5).withUneven(PlanConfig.Uneven.DROP);
        Loader<Sample> single = new Loader<>(store, manifest, plan, World.single(), 0, LoaderConfig.DEFAULT.withBatchSize(4), Decoder.identity());
        Set<Integer> seen = new HashSet<>();
        LoaderState state;
        try (EpochRun<Sample> run = single.epoch(1)) {
            for (int i = 0; i < 5; i++) {
                run.next().samples().forEach(s -> assertThat(seen.add(idOf(s))).isTrue());
            }
            state = run.state();
        }
        assertThat(state.consumed()).isEqualTo(20);
        World two = new World(2, 1, 1);
        for (int rank = 0; rank < 2; rank++) {
            Loader<Sample> l = new Loader<>(store, manifest, plan, two, rank, LoaderConfig.DEFAULT.withBatchSize(3), Decoder.identity());
            try (EpochRun<Sample> run = l.resume(state)) {
                while (run.hasNext()) {
                    run.next().samples().forEach(s -> assertThat(seen.add(idOf(s))).as("sample %d once", idOf(s)).isTrue());
                }
            }
        }
        int total = manifest.totalSamples();
        assertThat(seen.size()).isEqualTo(total - (total - 20) % 2); // DROP leaves at most one out
    }

    @Test
    void nodePartition_checkpointOnTwoNodes_resumesOnOne_withTheCheckpointsCanonicalCount() {
        PlanConfig plan = PlanConfig.DEFAULT.withSeed(9).withShuffleBlockShards(1); // auto: the node partition on two nodes
        World two = new World(2, 1, 1);
        Set<Integer> seen = new HashSet<>();
        LoaderState state = null;
        for (int rank = 0; rank < 2; rank++) {
            Loader<Sample> l = new Loader<>(store, manifest, plan, two, rank, LoaderConfig.DEFAULT.withBatchSize(3), Decoder.identity());
            try (EpochRun<Sample> run = l.epoch(1)) {
                for (int i = 0; i < 2; i++) {
                    run.next().samples().forEach(s -> assertThat(seen.add(idOf(s))).isTrue());
                }
                state = run.state();
            }
        }
        assertThat(state.canonicalNodes()).isEqualTo(2);
        assertThat(state.consumed()).isEqualTo(12);
        Loader<Sample> one = new Loader<>(store, manifest, plan, World.single(), 0, LoaderConfig.DEFAULT.withBatchSize(5), Decoder.identity());
        try (EpochRun<Sample> run = one.resume(state)) {
            while (run.hasNext()) {
                run.next().samples().forEach(s -> assertThat(seen.add(idOf(s))).as("sample %d once", idOf(s)).isTrue());
            }
        }
        assertThat(seen).hasSize(manifest.totalSamples());
        Loader<Sample> global = new Loader<>(store, manifest, plan.withPartition(PlanConfig.Partition.GLOBAL), World.single(), 0,
                LoaderConfig.DEFAULT, Decoder.identity());
        LoaderState taken = state;
        assertThatThrownBy(() -> global.resume(taken)).hasMessageContaining("over 2 canonical nodes");
    }

    /** Issue 24: the checkpoint records where the canonical nodes lived, so 4 -> 3 moves only the departed node's. */
    @Test
    void nodePartition_checkpointOnFourNodes_resumesOnThree_movingOnlyTheDepartedNodesCanonicalNodes() {
        PlanConfig plan = PlanConfig.DEFAULT.withSeed(9).withPartition(PlanConfig.Partition.NODE).withCanonicalNodes(12)
                .withShuffleBlockShards(1).withUneven(PlanConfig.Uneven.DROP);
        World four = new World(4, 1, 1);
        Set<Integer> seen = new HashSet<>();
        LoaderState state = null;
        for (int rank = 0; rank < 4; rank++) {
            Loader<Sample> l = new Loader<>(store, manifest, plan, four, rank, LoaderConfig.DEFAULT.withBatchSize(3), Decoder.identity());
            try (EpochRun<Sample> run = l.epoch(1)) {
                run.next().samples().forEach(s -> assertThat(seen.add(idOf(s))).isTrue());
                state = run.state();
            }
        }
        assertThat(state.consumed()).isEqualTo(12);
        assertThat(state.homes()).isEqualTo(CanonicalHomes.of(12, 4));
        World three = new World(3, 1, 1);
        CanonicalHomes moved = CanonicalHomes.of(12, 4).resized(3);
        for (int rank = 0; rank < 3; rank++) {
            Loader<Sample> l = new Loader<>(store, manifest, plan, three, rank, LoaderConfig.DEFAULT.withBatchSize(2), Decoder.identity());
            try (EpochRun<Sample> run = l.resume(state)) {
                while (run.hasNext()) {
                    run.next().samples().forEach(s -> assertThat(seen.add(idOf(s))).as("sample %d once", idOf(s)).isTrue());
                }
                assertThat(run.state().homes()).isEqualTo(moved);
            }
            try (EpochRun<Sample> next = l.epoch(2)) {
                assertThat(next.state().homes()).as("the next epoch keeps the moved homes").isEqualTo(moved);
            }
        }
        int total = manifest.totalSamples();
        assertThat(seen.size()).isGreaterThan(total - 6); // DROP leaves out less than a step of three ranks' batches
        assertThat(CanonicalHomes.of(12, 4).moved(moved)).isEqualTo(3);
    }

    @Test
    void slowDecoding_showsUpAsWaitPerStep() {
        Decoder<Sample> slow = s -> {
            try {
                Thread.sleep(15);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return s;
        };
        Loader<Sample> loader = new Loader<>(store, manifest, PlanConfig.DEFAULT, World.single(), 0,
                new LoaderConfig(4, 1, 4, 8, false), slow);
        try (EpochRun<Sample> run = loader.epoch(1)) {
            while (run.hasNext()) {
                run.next();
            }
            // one worker decoding 4 samples at 15 ms each: a consumer that never pauses waits about 60 ms a step
            assertThat(run.stats().waitP50Millis()).isGreaterThanOrEqualTo(40);
            assertThat(run.stats().waitTotalSeconds()).isGreaterThan(0.5);
        }
    }

    @Test
    void objectChangedUnderTheManifest_failsClearly() throws IOException {
        Shard first = manifest.shards().get(0);
        store.put(first.key(), PutBody.ofBytes(new byte[(int) first.size()]));
        Loader<Sample> loader = new Loader<>(store, manifest, PlanConfig.DEFAULT, World.single(), 0, LoaderConfig.DEFAULT, Decoder.identity());
        try (EpochRun<Sample> run = loader.epoch(1)) {
            assertThatThrownBy(() -> {
                while (run.hasNext()) {
                    run.next();
                }
            }).isInstanceOf(UncheckedIOException.class).hasMessageContaining("object changed");
        }
    }

    @Test
    void resume_withAnotherSeed_isRefused() {
        Loader<Sample> loader = new Loader<>(store, manifest, PlanConfig.DEFAULT.withSeed(1), World.single(), 0, LoaderConfig.DEFAULT, Decoder.identity());
        assertThatThrownBy(() -> loader.resume(new LoaderState(1, 0, 2))).hasMessageContaining("seed 2");
    }

    @Test
    void readAhead_ofSeveralLoaders_staysWithinOneSharedByteBudget() throws Exception {
        long maxSample = 0;
        for (Shard sh : manifest.shards()) {
            for (int i = 0; i < sh.samples(); i++) {
                maxSample = Math.max(maxSample, sh.sampleOffset(i + 1) - sh.sampleOffset(i));
            }
        }
        ReadAheadBudget budget = new ReadAheadBudget(5 * maxSample);
        World two = new World(1, 2, 1);
        List<EpochRun<Sample>> runs = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            runs.add(new Loader<>(store, manifest, PlanConfig.DEFAULT, two, rank, LoaderConfig.DEFAULT.withBatchSize(2), Decoder.identity(), budget)
                    .epoch(1));
        }
        long peak = 0;
        int delivered = 0;
        try {
            while (runs.get(0).hasNext() || runs.get(1).hasNext()) {
                for (EpochRun<Sample> run : runs) {
                    if (run.hasNext()) {
                        delivered += run.next().samples().size();
                    }
                    peak = Math.max(peak, budget.used());
                }
            }
        } finally {
            runs.forEach(EpochRun::close);
        }
        assertThat(delivered).isEqualTo(2 * EpochPlan.of(manifest, PlanConfig.DEFAULT.forWorld(two), 1).steps(0, 2));
        assertThat(peak).isPositive().isLessThanOrEqualTo(5 * maxSample + 2 * maxSample); // each reader may force one sample
        assertThat(budget.used()).isZero();
    }

    @Test
    void closingAnEpochEarly_countsTheReadAheadNeverConsumed() throws Exception {
        AtomicInteger decoded = new AtomicInteger();
        Decoder<Sample> counting = s -> {
            decoded.incrementAndGet();
            return s;
        };
        int batch = 4;
        int workers = 2;
        Loader<Sample> loader = new Loader<>(store, manifest, PlanConfig.DEFAULT, World.single(), 0,
                new LoaderConfig(batch, workers, 8, 40, false), counting);
        EpochRun<Sample> run = loader.epoch(1);
        run.next();
        // A worker completes a sample before it decodes its next, so once this many have been decoded at most
        // `workers` of them may be unfinished, and at least one finished sample is past the batch taken.
        Await.until("a sample read ahead and decoded", Duration.ofSeconds(30), () -> decoded.get() >= batch + workers + 1);
        run.close();
        assertThat(run.stats().wastedSamples()).isPositive();
        assertThat(run.stats().wastedBytes()).isPositive();
    }
}
