package dev.ferry.cli;

import dev.ferry.metrics.EpochReport;
import dev.ferry.metrics.RunReport;
import java.util.List;
import java.util.Locale;

/**
 * What the demo found, in one line: how busy the accelerator was through ferry against reading directly (its time
 * not spent waiting for data), egress after the first epoch against the dataset and against the floor the plan
 * predicts for ferry's tier, and what the accelerator could take at most. The epochs after the first are the ones
 * judged (the first is cold either way); a run of one epoch is judged on it.
 */
record DemoVerdict(double ferryBusy, double directBusy, String epochs, double egressShare, double floorShare, double acceleratorLimit) {
    /**
     * @param dataset         the dataset's bytes
     * @param predictedFerry  the egress the plan predicts per epoch for ferry's tier (null: none)
     * @param acceleratorLimit samples/s the accelerator could take: a batch per step
     */
    static DemoVerdict of(RunReport direct, RunReport ferry, long dataset, List<Long> predictedFerry, double acceleratorLimit) {
        int from = ferry.epochs().size() >= 2 ? 1 : 0;
        String epochs = from == 0 ? "epoch 1" : ferry.epochs().size() == 2 ? "epoch 2" : "epochs 2-" + ferry.epochs().size();
        double egress = 0;
        double floor = 0;
        int n = 0;
        for (int e = from; e < ferry.epochs().size(); e++) {
            egress += ferry.epochs().get(e).egressBytes();
            floor += predictedFerry == null || e >= predictedFerry.size() ? Double.NaN : predictedFerry.get(e);
            n++;
        }
        return new DemoVerdict(busy(ferry.epochs(), from), busy(direct.epochs(), from), epochs,
                n == 0 || dataset <= 0 ? Double.NaN : egress / n / dataset, n == 0 || dataset <= 0 ? Double.NaN : floor / n / dataset,
                acceleratorLimit);
    }

    /** The share of the consumer's time it was not waiting, over epochs {@code from} on, weighted by their length. */
    static double busy(List<EpochReport> epochs, int from) {
        double time = 0;
        double busy = 0;
        for (int e = from; e < epochs.size(); e++) {
            EpochReport r = epochs.get(e);
            double seconds = r.samplesPerSecond() > 0 ? r.samples() / r.samplesPerSecond() : 0;
            time += seconds;
            busy += seconds * (1 - r.waitShare());
        }
        return time <= 0 ? Double.NaN : busy / time;
    }

    /** The line the demo prints. */
    String line() {
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "found: through ferry the accelerator was busy %.0f%% of the time against %.0f%% read directly (%s)",
                100 * ferryBusy, 100 * directBusy, epochs));
        if (!Double.isNaN(egressShare) && !epochs.equals("epoch 1")) {
            out.append(String.format(Locale.ROOT, "; egress after epoch 1: %.2fx the dataset per epoch", egressShare));
            if (!Double.isNaN(floorShare)) {
                out.append(String.format(Locale.ROOT, ", the plan's floor for a tier of its size %.2fx", floorShare));
            }
        }
        out.append(String.format(Locale.ROOT, "; the accelerator could take %,.0f samples/s", acceleratorLimit));
        return out.toString();
    }
}
