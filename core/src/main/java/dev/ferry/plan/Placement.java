package dev.ferry.plan;

import java.util.Map;
import java.util.Objects;

/**
 * Where a training process sits in its job: the job's {@link World}, this process's node and rank, as the launcher
 * that started it says in its environment. ferry's Python client reads the same variables the same way
 * ({@code ferry_client.placement}); docs/kubernetes.md lists them. In order:
 * <ol>
 *   <li>{@code WORLD_SIZE} and {@code LOCAL_WORLD_SIZE}: torchrun (every process it starts also has {@code RANK},
 *       {@code LOCAL_RANK}, {@code GROUP_RANK} and {@code GROUP_WORLD_SIZE}), and launchers that copy its variables.
 *       The node is {@code GROUP_RANK}, else {@code NODE_RANK}, else {@code RANK / LOCAL_WORLD_SIZE}.
 *   <li>{@code PET_NNODES}: a Kubeflow PyTorchJob's pod outside torchrun (the training operator sets
 *       {@code PET_NNODES}, {@code PET_NPROC_PER_NODE} and {@code PET_NODE_RANK} for torchrun to read, and
 *       {@code RANK} to the pod's index). The rank is known only with one process per node or {@code LOCAL_RANK}. A
 *       {@code PET_NPROC_PER_NODE} of {@code auto} (the operator's default) counts as the operator counts it in
 *       {@code WORLD_SIZE}: one process per pod.
 *   <li>{@code WORLD_SIZE} alone: one rank per node (a PyTorchJob without {@code nprocPerNode}: {@code RANK} is the
 *       pod's index).
 *   <li>{@code JOB_COMPLETION_INDEX} alone (an Indexed Job's or a JobSet's pod, which say no world size): refused,
 *       as a single-node guess would have every node read the whole corpus.
 *   <li>Nothing: one process, {@link World#single()}.
 * </ol>
 * ferry's plans number ranks node by node with the same count on each node; a world that is not so is refused
 * with the variables that say otherwise. Immutable.
 *
 * @param rank this process's rank, or -1 when the environment does not say (a pod of several ranks outside torchrun)
 * @param localRank its rank on its node, or -1 when unknown
 * @param source which launcher's variables were read: {@code torchrun}, {@code kubeflow}, {@code WORLD_SIZE} or {@code none}
 */
public record Placement(World world, int node, int rank, int localRank, String source) {
    public Placement {
        Objects.requireNonNull(world, "world is null");
        Objects.requireNonNull(source, "source is null");
        if (node < 0 || node >= world.nodes()) {
            throw new IllegalArgumentException("node must be 0 to " + (world.nodes() - 1) + ": " + node);
        }
        if (rank < -1 || rank >= world.ranks()) {
            throw new IllegalArgumentException("rank must be 0 to " + (world.ranks() - 1) + " (or -1, unknown): " + rank);
        }
        if (localRank < -1 || localRank >= world.ranksPerNode()) {
            throw new IllegalArgumentException("localRank must be 0 to " + (world.ranksPerNode() - 1) + " (or -1, unknown): " + localRank);
        }
        if (rank >= 0 && world.nodeOf(rank) != node) {
            throw new IllegalArgumentException("rank " + rank + " is not on node " + node + " of " + world.nodes() + " nodes of "
                    + world.ranksPerNode() + " ranks: ferry's plans number ranks node by node");
        }
    }

    /** The placement of this process, from its environment ({@link #fromEnvironment(Map, int)} with one worker per rank). */
    public static Placement fromEnvironment() {
        return fromEnvironment(System.getenv(), 1);
    }

    /**
     * The placement the launcher's variables in {@code env} describe (see the class comment), with
     * {@code workersPerRank} loader workers per rank (no launcher says how many).
     *
     * @throws IllegalArgumentException in one sentence naming the variables, when they are not numbers, contradict
     *         each other, or describe a world ferry cannot plan (ranks per node that differ)
     */
    public static Placement fromEnvironment(Map<String, String> env, int workersPerRank) {
        Integer worldSize = integer(env, "WORLD_SIZE");
        Integer localWorldSize = integer(env, "LOCAL_WORLD_SIZE");
        Integer rank = integer(env, "RANK");
        Integer localRank = integer(env, "LOCAL_RANK");
        if (worldSize != null && localWorldSize != null) {
            if (worldSize < 1 || localWorldSize < 1 || worldSize % localWorldSize != 0) {
                throw new IllegalArgumentException("WORLD_SIZE " + worldSize + " is not a whole number of nodes of LOCAL_WORLD_SIZE "
                        + localWorldSize + " ranks: ferry's plans need the same number of ranks on every node");
            }
            int nodes = worldSize / localWorldSize;
            Integer groups = integer(env, "GROUP_WORLD_SIZE");
            if (groups != null && groups != nodes) {
                throw new IllegalArgumentException("GROUP_WORLD_SIZE " + groups + " nodes, but WORLD_SIZE " + worldSize + " / LOCAL_WORLD_SIZE "
                        + localWorldSize + " is " + nodes + ": ferry's plans need the same number of ranks on every node");
            }
            Integer node = first(env, "GROUP_RANK", "NODE_RANK");
            if (node == null) {
                if (rank == null) {
                    throw new IllegalArgumentException("WORLD_SIZE and LOCAL_WORLD_SIZE are set but neither GROUP_RANK, NODE_RANK nor RANK "
                            + "says which node this is");
                }
                node = rank / localWorldSize;
            }
            int local = localRank != null ? localRank : rank != null ? rank % localWorldSize : -1;
            String source = env.containsKey("TORCHELASTIC_RUN_ID") ? "torchrun" : "WORLD_SIZE";
            return placement(new World(nodes, localWorldSize, workersPerRank), node, rank != null ? rank : local >= 0 ? node * localWorldSize + local : -1,
                    local, source);
        }
        String nnodes = env.get("PET_NNODES");
        if (nnodes != null && !nnodes.isBlank()) {
            if (nnodes.contains(":")) {
                throw new IllegalArgumentException("PET_NNODES is the range " + nnodes.trim() + " (an elastic PyTorchJob): the world is known "
                        + "only once torchrun's rendezvous has run; register from the processes torchrun starts");
            }
            int nodes = integer(env, "PET_NNODES");
            int perNode = 1;
            String nproc = env.get("PET_NPROC_PER_NODE");
            if (nproc != null && !nproc.isBlank()) {
                try {
                    perNode = Integer.parseInt(nproc.trim());
                } catch (NumberFormatException e) {
                    // "auto" (the operator's default) or "gpu": the operator counted one process per pod in WORLD_SIZE,
                    // which a process started in the pod without torchrun is
                    if (worldSize == null || nodes == 0 || worldSize % nodes != 0) {
                        throw new IllegalArgumentException("PET_NPROC_PER_NODE is '" + nproc.trim() + "': the ranks per node are known "
                                + "only inside torchrun; register from the processes torchrun starts");
                    }
                    perNode = worldSize / nodes;
                }
            }
            Integer node = first(env, "PET_NODE_RANK", "NODE_RANK", "GROUP_RANK", "RANK");
            if (node == null) {
                throw new IllegalArgumentException("PET_NNODES is set but neither PET_NODE_RANK nor RANK says which node this is");
            }
            int local = localRank != null ? localRank : perNode == 1 ? 0 : -1;
            return placement(new World(nodes, perNode, workersPerRank), node, local >= 0 ? node * perNode + local : -1, local, "kubeflow");
        }
        if (worldSize != null) {
            if (rank == null) {
                throw new IllegalArgumentException("WORLD_SIZE is set but RANK is not");
            }
            Integer node = first(env, "GROUP_RANK", "NODE_RANK");
            if (node != null && !node.equals(rank)) {
                throw new IllegalArgumentException("RANK " + rank + " on node " + node + " with WORLD_SIZE " + worldSize
                        + " but no LOCAL_WORLD_SIZE: set LOCAL_WORLD_SIZE (the ranks per node), as torchrun does");
            }
            if (worldSize < 1) {
                throw new IllegalArgumentException("WORLD_SIZE must be at least 1: " + worldSize);
            }
            return placement(new World(worldSize, 1, workersPerRank), rank, rank, 0, "WORLD_SIZE");
        }
        Integer index = integer(env, "JOB_COMPLETION_INDEX");
        if (index != null) {
            throw new IllegalArgumentException("this process is index " + index + " of an Indexed Job or JobSet (JOB_COMPLETION_INDEX), but "
                    + "no WORLD_SIZE says how many nodes the job has: start it with torchrun (--nnodes N --node-rank "
                    + "$JOB_COMPLETION_INDEX), or give the world and node explicitly");
        }
        return new Placement(new World(1, 1, workersPerRank), 0, 0, 0, "none");
    }

    private static Placement placement(World world, int node, int rank, int localRank, String source) {
        if (node < 0 || node >= world.nodes()) {
            throw new IllegalArgumentException("the node rank " + node + " is not one of the world's " + world.nodes() + " nodes (" + source + "'s variables)");
        }
        if (rank >= world.ranks()) {
            throw new IllegalArgumentException("RANK " + rank + " is not one of the world's " + world.ranks() + " ranks");
        }
        if (localRank >= world.ranksPerNode()) {
            throw new IllegalArgumentException("LOCAL_RANK " + localRank + " is not one of the node's " + world.ranksPerNode() + " ranks");
        }
        return new Placement(world, node, rank, localRank, source);
    }

    /** The first of {@code names} that is set, as an integer, or null. */
    private static Integer first(Map<String, String> env, String... names) {
        for (String name : names) {
            Integer v = integer(env, name);
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    /** {@code name}'s value as a non-negative integer, or null when unset or blank. */
    private static Integer integer(Map<String, String> env, String name) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return null;
        }
        try {
            int i = Integer.parseInt(v.trim());
            if (i < 0) {
                throw new NumberFormatException();
            }
            return i;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number of at least 0, not '" + v + "'");
        }
    }
}
