package dev.ferry.plan;

/**
 * Who reads which position of an {@link EpochPlan} on one world, from a resume position: at step {@code t}
 * the ranks together take positions {@code [start + t * ranks, start + (t + 1) * ranks)}, each node the
 * positions of its canonical nodes (their {@link CanonicalHomes}: {@code c mod nodes} unless a world change moved them),
 * its ranks in position order; positions a node
 * cannot take (more of its own than it has ranks) go, in order, to the nodes with ranks to spare. With one
 * canonical node that is rank {@code r} taking position {@code start + t * ranks + r}, computed without a
 * table.
 *
 * <p><b>Rounds and worlds.</b> The plan's order is rounds of one position per canonical node. On a world whose
 * homes are {@code c mod nodes}, every run of {@code nodes} consecutive positions has one of each node's, which is
 * what keeps reads local. CanonicalHomes moved by a world change ({@link CanonicalHomes#resized}) break that run, so the deal reads
 * each round in the world's own order ({@link CanonicalHomes#roundOrder}: its nodes' canonical nodes interleaved), the same
 * set of positions in another order: a checkpoint's count of consumed samples still fixes the consumed set once
 * it also records whose order the round in progress follows ({@link #roundHomesAt}). With {@code c mod nodes}
 * that order is the plan's own, so nothing changes for a world that never changed.
 *
 * <p>Immutable once built; the cache of the last round's order is filled during construction only, so a RankAssignment is
 * safe to share once published.
 */
public final class RankAssignment {
    private final EpochPlan plan;
    private final World world;
    private final long start;
    private final int steps;
    /** positions[t * ranks + rank], or null when the arithmetic rule holds (one canonical node). */
    private final long[] positions;
    private final long local;
    private final CanonicalHomes homes;
    private final CanonicalHomes roundHomes;

    RankAssignment(EpochPlan plan, World world, long start, CanonicalHomes homes, CanonicalHomes roundHomes) {
        this.plan = plan;
        this.world = world;
        this.start = start;
        this.homes = homes;
        this.roundHomes = roundHomes;
        int ranks = world.ranks();
        this.steps = plan.steps(start, ranks);
        if (plan.canonicalNodes() == 1) {
            positions = null;
            local = world.nodes() == 1 ? (long) steps * ranks : 0;
            startRound = -1;
            return;
        }
        startRound = start < plan.size() && start > plan.roundStart(plan.roundOf(start)) ? plan.roundOf(start) : -1;
        boolean reordered = !homes.standard() || (startRound >= 0 && !roundHomes.standard());
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
            for (long w = first; w < first + ranks; w++) {
                long q = reordered ? planPosition(w) : w;
                int node = homes.nodeOf(plan.canonicalAt(q));
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

    /** The round in progress at {@code start}, when the deal starts inside one (read in the order of {@link #roundHomes}), else -1. */
    private final int startRound;
    private int cachedRound = -1;
    private CanonicalHomes cachedHomes;
    private int[] cachedOrder;

    /**
     * The position of the plan's order that is the {@code w}-th consumed on this world: rounds are the same sets of
     * positions on every world, each read in the order of {@link CanonicalHomes#roundOrder} (the identity for {@code c mod
     * nodes}), the round in progress at the start in the order of the world that began it; past the end, the
     * padding wraps to the start.
     */
    private long planPosition(long w) {
        int n = plan.size();
        long base = w / n * n;
        int p = (int) (w % n);
        int r = plan.roundOf(p);
        CanonicalHomes h = w < n && r == startRound ? roundHomes : homes;
        if (r != cachedRound || h != cachedHomes) {
            int a = plan.roundStart(r);
            int len = plan.roundStart(r + 1) - a;
            int[] key = h.roundOrder();
            Integer[] byKey = new Integer[len];
            for (int i = 0; i < len; i++) {
                byKey[i] = i;
            }
            java.util.Arrays.sort(byKey, (x, y) -> Integer.compare(key[plan.canonicalAt(a + x)], key[plan.canonicalAt(a + y)]));
            cachedOrder = new int[len];
            for (int i = 0; i < len; i++) {
                cachedOrder[i] = byKey[i];
            }
            cachedRound = r;
            cachedHomes = h;
        }
        return base + plan.roundStart(r) + cachedOrder[p - plan.roundStart(r)];
    }

    /**
     * The homes whose order the round in progress after {@code consumed} samples follows, for a checkpoint taken
     * there: those of the world that began that round (this deal's homes, or, inside the round this deal resumed,
     * the ones it was resumed with).
     */
    public CanonicalHomes roundHomesAt(long consumed) {
        if (startRound < 0 || consumed >= plan.size()) {
            return homes;
        }
        int r = plan.roundOf(consumed);
        return r == startRound && consumed > plan.roundStart(r) ? roundHomes : homes;
    }

    public World world() {
        return world;
    }

    public long start() {
        return start;
    }

    /** Which node each canonical node lives on in this deal. */
    public CanonicalHomes homes() {
        return homes;
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
