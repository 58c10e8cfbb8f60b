package dev.ferry.plan;

import java.util.Arrays;

/**
 * Which physical node each canonical node of a node-partition plan lives on: the world half of a checkpoint.
 * A job starts with {@code c mod nodes} ({@link #of}); when it resumes on another node count, {@link #resized}
 * moves only what must move, and the checkpoint of the world in progress records the result, so the next change
 * starts from it rather than from {@code c mod nodes} again.
 *
 * <p><b>Why.</b> With {@code c mod nodes}, 12 canonical nodes going from 4 nodes to 3 change node for 9 of the 12
 * (only {@code c mod 12} in 0..2 keep theirs), and each is read again from the origin by its new node: three
 * quarters of the corpus where one quarter, the departed node's, had to move. Resized from the world in progress,
 * the departed node's three canonical nodes go one to each survivor and the other nine stay; going back to 4,
 * the new node takes one from each, a quarter. The order of the epoch does not depend on the homes, only who
 * reads which position does, so a resume stays exact sample by sample whatever they are.
 *
 * <p><b>Rule.</b> Shrinking to {@code n} nodes, nodes {@code n} and up leave (a launcher numbers the survivors
 * first) and their canonical nodes go, in canonical order, each to the survivor holding the fewest (the lowest
 * numbered on a tie). Growing, each new node in turn takes, from the node holding the most (the lowest numbered
 * on a tie), its highest canonical node, until no node holds two more than another. Deterministic: every rank
 * that resizes the same homes to the same count gets the same answer.
 *
 * <p>Immutable and thread-safe.
 */
public final class CanonicalHomes {
    private final int[] nodeOf;
    private final int nodes;
    /** {@link #roundOrder}, computed once (a benign race: every thread computes the same array). */
    private volatile int[] roundOrder;

    private CanonicalHomes(int[] nodeOf, int nodes) {
        this.nodeOf = nodeOf;
        this.nodes = nodes;
    }

    /** The homes a job starts with: canonical node {@code c} on node {@code c mod nodes}. */
    public static CanonicalHomes of(int canonical, int nodes) {
        if (canonical < 1 || nodes < 1) {
            throw new IllegalArgumentException("canonical nodes and nodes must be at least 1: " + canonical + ", " + nodes);
        }
        int[] at = new int[canonical];
        for (int c = 0; c < canonical; c++) {
            at[c] = c % nodes;
        }
        return new CanonicalHomes(at, nodes);
    }

    /**
     * CanonicalHomes as a checkpoint recorded them ({@link #toArray}): {@code nodeOf[c]} is canonical node {@code c}'s node,
     * each below {@code nodes}.
     */
    public static CanonicalHomes parse(int[] nodeOf, int nodes) {
        if (nodeOf == null || nodeOf.length == 0) {
            throw new IllegalArgumentException("homes are empty");
        }
        if (nodes < 1) {
            throw new IllegalArgumentException("nodes must be at least 1: " + nodes);
        }
        for (int c = 0; c < nodeOf.length; c++) {
            if (nodeOf[c] < 0 || nodeOf[c] >= nodes) {
                throw new IllegalArgumentException("canonical node " + c + "'s home must be 0 to " + (nodes - 1) + ": " + nodeOf[c]);
            }
        }
        return new CanonicalHomes(nodeOf.clone(), nodes);
    }

    /** The homes on {@code newNodes} nodes, moving as few canonical nodes as balance allows (see the class note). */
    public CanonicalHomes resized(int newNodes) {
        if (newNodes < 1) {
            throw new IllegalArgumentException("nodes must be at least 1: " + newNodes);
        }
        int[] at = nodeOf.clone();
        int[] count = new int[Math.max(nodes, newNodes)];
        for (int n : at) {
            count[n]++;
        }
        for (int c = 0; c < at.length; c++) {
            if (at[c] >= newNodes) {
                int to = 0;
                for (int n = 1; n < newNodes; n++) {
                    if (count[n] < count[to]) {
                        to = n;
                    }
                }
                count[at[c]]--;
                count[to]++;
                at[c] = to;
            }
        }
        while (true) {
            int most = 0;
            int least = 0;
            for (int n = 1; n < newNodes; n++) {
                if (count[n] > count[most]) {
                    most = n;
                }
                if (count[n] < count[least]) {
                    least = n;
                }
            }
            if (count[most] - count[least] < 2) {
                break;
            }
            for (int c = at.length - 1; c >= 0; c--) {
                if (at[c] == most) {
                    at[c] = least;
                    count[most]--;
                    count[least]++;
                    break;
                }
            }
        }
        return new CanonicalHomes(at, newNodes);
    }

    /**
     * Where each canonical node comes in a round read on this world: the nodes' canonical nodes interleaved (the
     * first of every node, in node order, then the second of every node, ...), so that every run of {@code nodes}
     * positions has one of each node's when the nodes hold as many. For {@code c mod nodes} this is {@code c}: the
     * plan's own order.
     */
    public int[] roundOrder() {
        int[] order = roundOrder;
        if (order == null) {
            int[] seen = new int[nodes];
            int[] rank = new int[nodeOf.length];
            int most = 0;
            for (int c = 0; c < nodeOf.length; c++) {
                rank[c] = seen[nodeOf[c]]++;
                most = Math.max(most, seen[nodeOf[c]]);
            }
            order = new int[nodeOf.length];
            // key (rank within its node, node), densely numbered
            int[][] at = new int[most][nodes];
            for (int[] row : at) {
                Arrays.fill(row, -1);
            }
            for (int c = 0; c < nodeOf.length; c++) {
                at[rank[c]][nodeOf[c]] = c;
            }
            int next = 0;
            for (int[] row : at) {
                for (int c : row) {
                    if (c >= 0) {
                        order[c] = next++;
                    }
                }
            }
            roundOrder = order;
        }
        return order;
    }

    /** The node canonical node {@code c} lives on. */
    public int nodeOf(int c) {
        return nodeOf[c];
    }

    /** The node count these homes are for. */
    public int nodes() {
        return nodes;
    }

    /** The canonical node count. */
    public int canonical() {
        return nodeOf.length;
    }

    /** Whether these are the starting homes, {@code c mod nodes} (a checkpoint need not record them). */
    public boolean standard() {
        for (int c = 0; c < nodeOf.length; c++) {
            if (nodeOf[c] != c % nodes) {
                return false;
            }
        }
        return true;
    }

    /** Each canonical node's node, for a checkpoint. */
    public int[] toArray() {
        return nodeOf.clone();
    }

    /** The canonical nodes that live on another node in {@code other} (same canonical count). */
    public int moved(CanonicalHomes other) {
        if (other.canonical() != canonical()) {
            throw new IllegalArgumentException("homes over " + other.canonical() + " canonical nodes, not " + canonical());
        }
        int moved = 0;
        for (int c = 0; c < nodeOf.length; c++) {
            moved += nodeOf[c] != other.nodeOf[c] ? 1 : 0;
        }
        return moved;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CanonicalHomes h && h.nodes == nodes && Arrays.equals(h.nodeOf, nodeOf);
    }

    @Override
    public int hashCode() {
        return 31 * nodes + Arrays.hashCode(nodeOf);
    }

    @Override
    public String toString() {
        return "CanonicalHomes" + Arrays.toString(nodeOf) + " on " + nodes + " nodes";
    }
}
