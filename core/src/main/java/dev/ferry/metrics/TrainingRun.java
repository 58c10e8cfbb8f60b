package dev.ferry.metrics;

import dev.ferry.cache.CachingStore;
import dev.ferry.loader.Batch;
import dev.ferry.loader.Decoder;
import dev.ferry.loader.EpochRun;
import dev.ferry.loader.Loader;
import dev.ferry.loader.LoaderConfig;
import dev.ferry.loader.ReadAheadBudget;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.PlanConfig;
import dev.ferry.plan.World;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.chain.MeteredStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A measured training run of one rank: epochs of the loader feeding a simulated accelerator that spends a
 * fixed time on every batch, with the four numbers taken per epoch and the advisor's findings at the end.
 * What the demo runs twice (direct and through ferry) and what the advisor's tests run for real.
 */
public final class TrainingRun {
    /** Called after every step: epoch, step, steps in the epoch, the run so far. */
    @FunctionalInterface
    public interface Progress {
        void step(int epoch, long step, long steps, EpochRun<?> run);
    }

    /**
     * Everything a run needs. {@code cache} is null for a run without a local tier; {@code metrics} and
     * {@code budget} (the process-wide read-ahead budget) may be null.
     */
    public record Setup(ObjectStore store, MeteredStore meter, CachingStore cache, Manifest manifest, PlanConfig plan,
            LoaderConfig loader, Decoder<?> decoder, int epochs, Duration stepTime, List<Long> predictedEgress,
            Advisor.Context context, FerryMetrics metrics, ReadAheadBudget budget) {
        public Setup {
            Objects.requireNonNull(store, "store is null");
            Objects.requireNonNull(meter, "meter is null");
            Objects.requireNonNull(manifest, "manifest is null");
            Objects.requireNonNull(plan, "plan is null");
            Objects.requireNonNull(loader, "loader is null");
            Objects.requireNonNull(decoder, "decoder is null");
            Objects.requireNonNull(stepTime, "stepTime is null");
            Objects.requireNonNull(context, "context is null");
            if (epochs < 1) {
                throw new IllegalArgumentException("epochs must be at least 1: " + epochs);
            }
        }
    }

    private TrainingRun() {
    }

    public static RunReport run(Setup setup, Progress progress) throws InterruptedException {
        Loader<?> loader = new Loader<>(setup.store(), setup.manifest(), setup.plan(), World.single(), 0, setup.loader(), setup.decoder(),
                setup.budget());
        EpochMeter meter = new EpochMeter(setup.meter(), setup.cache());
        List<EpochReport> reports = new ArrayList<>();
        for (int epoch = 1; epoch <= setup.epochs(); epoch++) {
            meter.start();
            try (EpochRun<?> run = loader.epoch(epoch)) {
                long steps = (run.size() + setup.loader().batchSize() - 1) / setup.loader().batchSize();
                while (run.hasNext()) {
                    Batch<?> batch = run.next();
                    if (setup.metrics() != null) {
                        setup.metrics().step(epoch, batch.samples().size(), batch.waitNanos());
                    }
                    if (!setup.stepTime().isZero()) {
                        Thread.sleep(setup.stepTime().toMillis(), setup.stepTime().toNanosPart() % 1_000_000);
                    }
                    if (progress != null) {
                        progress.step(epoch, batch.step() + 1, steps, run);
                    }
                }
                long predicted = setup.predictedEgress() == null ? -1 : setup.predictedEgress().get(epoch - 1);
                reports.add(meter.finish(run.stats(), predicted));
            }
        }
        return new RunReport(reports, Advisor.advise(reports, setup.context()));
    }
}
