package dev.ferry.plan;

/**
 * Who reads which position of an {@link EpochPlan} on one world, from a resume position: at step {@code t}
 * the ranks together take positions {@code [start + t * ranks, start + (t + 1) * ranks)}, each node the
 * positions of its canonical nodes ({@code c mod nodes}), its ranks in position order; positions a node
 * cannot take (more of its own than it has ranks) go, in order, to the nodes with ranks to spare. With one
 * canonical node that is rank {@code r} taking position {@code start + t * ranks + r}, computed without a
 * table. Immutable and thread-safe.
 */
public final class Deal {
    private final EpochPlan plan;
    private final World world;
    private final long start;
    private final int steps;
    /** positions[t * ranks + rank], or null when the arithmetic rule holds (one canonical node). */
    private final long[] positions;
    private final long local;

    Deal(EpochPlan plan, World world, long start) {
        this.plan = plan;
        this.world = world;
        this.start = start;
        int ranks = world.ranks();
        this.steps = plan.steps(start, ranks);
        if (plan.canonicalNodes() == 1) {
            positions = null;
            local = world.nodes() == 1 ? (long) steps * ranks : 0;
            return;
        }
        int nodes = world.nodes();
        int perNode = world.ranksPerNode();
        positions = new long[Math.multiplyExact(steps, ranks)];
        int[] taken = new int[nodes];
        long[] spill = new long[ranks];
        long ownReads = 0;
        for (int t = 0; t < steps; t++) {
            java.util.Arrays.fill(taken, 0);
            int spilled = 0;
            long first = start + (long) t * ranks;
            int base = t * ranks;
            for (long q = first; q < first + ranks; q++) {
                int node = plan.canonicalAt(q) % nodes;
                if (taken[node] < perNode) {
                    positions[base + node * perNode + taken[node]++] = q;
                    ownReads++;
                } else {
                    spill[spilled++] = q;
                }
            }
            for (int node = 0, next = 0; next < spilled; node++) {
                while (taken[node] < perNode && next < spilled) {
                    positions[base + node * perNode + taken[node]++] = spill[next++];
                }
            }
        }
        local = ownReads;
    }

    public World world() {
        return world;
    }

    public long start() {
        return start;
    }

    /** Steps every rank takes. */
    public int steps() {
        return steps;
    }

    /** The position of the order that {@code rank} reads at {@code step}. */
    public long position(int rank, int step) {
        return positions == null ? start + (long) step * world.ranks() + rank : positions[step * world.ranks() + rank];
    }

    /** The sample {@code rank} reads at {@code step}. */
    public int sample(int rank, int step) {
        return plan.sampleAt(position(rank, step));
    }

    /** A rank's samples, in order. */
    public int[] rankSamples(int rank) {
        EpochPlan.checkRank(rank, world.ranks());
        int[] out = new int[steps];
        for (int t = 0; t < steps; t++) {
            out[t] = sample(rank, t);
        }
        return out;
    }

    /**
     * The share of reads that stay on the node whose canonical node holds them: 1 when the node count divides
     * the canonical node count; 0 for the global plan on more than one node, where no shard has a home.
     */
    public double localShare() {
        long reads = (long) steps * world.ranks();
        return reads == 0 ? 1 : (double) local / reads;
    }
}
