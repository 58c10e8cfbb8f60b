package dev.ferry.plan;

/**
 * The shape of a training job: {@code nodes} machines, {@code ranksPerNode} consumers (accelerators) on each,
 * {@code workersPerRank} loader workers feeding each consumer. Ranks are numbered node by node.
 */
public record World(int nodes, int ranksPerNode, int workersPerRank) {
    public World {
        if (nodes < 1 || ranksPerNode < 1 || workersPerRank < 1) {
            throw new IllegalArgumentException("nodes, ranksPerNode and workersPerRank must be at least 1: "
                    + nodes + ", " + ranksPerNode + ", " + workersPerRank);
        }
        if ((long) nodes * ranksPerNode > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a world may have at most " + Integer.MAX_VALUE + " ranks: " + nodes + " nodes x "
                    + ranksPerNode + " ranks per node");
        }
    }

    public static World single() {
        return new World(1, 1, 1);
    }

    public int ranks() {
        return nodes * ranksPerNode;
    }

    public int nodeOf(int rank) {
        return rank / ranksPerNode;
    }
}
