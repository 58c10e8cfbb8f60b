package dev.ferry.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Shuffled-epoch traces: {@code objects} objects of {@code size} bytes, each epoch a fresh uniform permutation
 * (Fisher-Yates with a seeded generator), the access pattern of a training job that reshuffles every epoch.
 */
public final class SyntheticTrace {
    private SyntheticTrace() {
    }

    public static List<Access> shuffledEpochs(int objects, int epochs, long size, long seed) {
        if (objects < 1 || epochs < 1 || size < 0) {
            throw new IllegalArgumentException("need objects >= 1, epochs >= 1, size >= 0: " + objects + ", " + epochs + ", " + size);
        }
        SplittableRandom random = new SplittableRandom(seed);
        int[] order = new int[objects];
        List<Access> trace = new ArrayList<>(objects * epochs);
        for (int e = 0; e < epochs; e++) {
            for (int i = 0; i < objects; i++) {
                order[i] = i;
            }
            for (int i = objects - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            for (int i : order) {
                trace.add(new Access(String.format("obj-%07d", i), size));
            }
        }
        return trace;
    }
}
