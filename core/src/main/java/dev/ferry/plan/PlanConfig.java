package dev.ferry.plan;

import java.util.Locale;

/**
 * How plans shuffle and split. Keys and defaults:
 * <ul>
 *   <li>{@code seed} (0): with the epoch, fixes every order; the same seed gives the same plan anywhere.
 *   <li>{@code shuffleBlockShards} (4): shards are shuffled, then samples are shuffled within blocks of this
 *       many consecutive shards (MosaicML Streaming's py1br idea): a reader has about this many shards open
 *       at a time, yet samples of neighbouring shards mix.
 *   <li>{@code uneven} (PAD): when the samples do not divide evenly among ranks, PAD repeats samples from the
 *       start of the epoch's order so every rank gets the same count; DROP leaves the last few out. Either way
 *       every rank steps the same number of times, so no rank waits forever for another.
 *   <li>{@code partition} (AUTO): how the corpus is split over the nodes of a job. {@code NODE}: shards are
 *       assigned to nodes once (sticky, balanced by samples then bytes), and each node reads only its own
 *       shards every epoch, so the corpus leaves the object store once and later epochs read local disks.
 *       {@code GLOBAL}: one order of every sample, dealt round robin to every rank of the world, so every node
 *       reads a few samples of every shard (egress multiplies by the number of nodes unless a group or a
 *       shared tier absorbs it). {@code AUTO} is NODE for a world of more than one node, else GLOBAL; see
 *       {@link #forWorld}.
 *   <li>{@code canonicalNodes} (0: the job's node count when it starts): the NODE plan is defined over this
 *       many canonical nodes, which physical nodes take ({@code c mod nodes}), so resuming on another world
 *       size is exact. Choose a multiple of every node count the job may run on (e.g. 12 for 1, 2, 3, 4 or 6
 *       nodes): then every read stays on its node; otherwise the reads that do not fit go to another node.
 *   <li>{@code mixFraction} (0): in the NODE plan, the share of each canonical node's shards that moves to
 *       another canonical node for one epoch (a different choice each epoch): more shards in every global
 *       batch, paid for in reads from a peer or the origin.
 * </ul>
 */
public record PlanConfig(long seed, int shuffleBlockShards, Uneven uneven, Partition partition, int canonicalNodes, double mixFraction) {
    public enum Uneven { PAD, DROP }

    /** How a job's reads are split over its nodes. */
    public enum Partition {
        AUTO, NODE, GLOBAL;

        /** Parses {@code node}, {@code global} or {@code auto} (any case). */
        public static Partition parse(String text) {
            for (Partition p : values()) {
                if (p.name().equalsIgnoreCase(text == null ? "" : text.trim())) {
                    return p;
                }
            }
            throw new IllegalArgumentException("partition must be node, global or auto, not '" + text + "'");
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public static final PlanConfig DEFAULT = new PlanConfig(0, 4, Uneven.PAD, Partition.AUTO, 0, 0);

    /**
     * The shuffle block a node's local tier can serve without evicting a shard before its last read in the
     * epoch: the default's 4 shards when the node's share of the corpus fits in its tier (nothing is evicted
     * anyway), else as many shards as a quarter of the tier holds, at least 1 (the block being read, the next
     * one arriving ahead of the reader, and the rest for what MIN keeps from epoch to epoch). A node whose share
     * outgrew its tier otherwise interleaves a block as big as the tier and re-reads part of it within the
     * epoch: at 8 nodes x 4 GiB over 64 GiB in 1 GiB shards, 1.62x the corpus in epoch 1 instead of 1.00x
     * (docs/plans.md). A smaller block mixes fewer shards per batch ({@code global_batch_shard_mix}).
     *
     * @param tierBytes the node's local tier (0 or less: unknown, the default is kept)
     * @param shareBytes the bytes this node reads each epoch (its shards under the node partition)
     * @param meanShardBytes the corpus's mean shard size
     */
    public static int shuffleBlockFittingTier(long tierBytes, long shareBytes, long meanShardBytes) {
        int standard = DEFAULT.shuffleBlockShards();
        if (tierBytes <= 0 || meanShardBytes <= 0 || shareBytes <= tierBytes) {
            return standard;
        }
        return (int) Math.clamp(tierBytes / 4 / meanShardBytes, 1, standard);
    }

    public PlanConfig {
        if (shuffleBlockShards < 1) {
            throw new IllegalArgumentException("shuffleBlockShards must be at least 1: " + shuffleBlockShards);
        }
        if (uneven == null) {
            throw new IllegalArgumentException("uneven is null");
        }
        if (partition == null) {
            throw new IllegalArgumentException("partition is null");
        }
        if (canonicalNodes < 0) {
            throw new IllegalArgumentException("canonicalNodes must not be negative: " + canonicalNodes);
        }
        if (!(mixFraction >= 0 && mixFraction <= 1)) {
            throw new IllegalArgumentException("mixFraction must be between 0 and 1: " + mixFraction);
        }
        if (partition == Partition.GLOBAL && canonicalNodes > 1) {
            throw new IllegalArgumentException("canonicalNodes applies to the node partition only, not to global: " + canonicalNodes);
        }
    }

    public PlanConfig withSeed(long newSeed) {
        return new PlanConfig(newSeed, shuffleBlockShards, uneven, partition, canonicalNodes, mixFraction);
    }

    public PlanConfig withUneven(Uneven mode) {
        return new PlanConfig(seed, shuffleBlockShards, mode, partition, canonicalNodes, mixFraction);
    }

    public PlanConfig withShuffleBlockShards(int shards) {
        return new PlanConfig(seed, shards, uneven, partition, canonicalNodes, mixFraction);
    }

    public PlanConfig withPartition(Partition p) {
        return new PlanConfig(seed, shuffleBlockShards, uneven, p, p == Partition.GLOBAL ? 0 : canonicalNodes, mixFraction);
    }

    /** The node partition over {@code nodes} canonical nodes (0: the job's node count, set by {@link #forWorld}). */
    public PlanConfig withCanonicalNodes(int nodes) {
        return new PlanConfig(seed, shuffleBlockShards, uneven, partition == Partition.GLOBAL ? Partition.NODE : partition, nodes,
                mixFraction);
    }

    public PlanConfig withMixFraction(double fraction) {
        return new PlanConfig(seed, shuffleBlockShards, uneven, partition, canonicalNodes, fraction);
    }

    /**
     * This config made definite for a job that starts on {@code world}: AUTO becomes NODE for more than one
     * node and GLOBAL for one; an unset canonical node count becomes the world's node count. A job keeps the
     * result for its whole life (a checkpoint records {@link #canonical()}), whatever world it resumes on.
     */
    public PlanConfig forWorld(World world) {
        Partition p = partition == Partition.AUTO ? (world.nodes() > 1 ? Partition.NODE : Partition.GLOBAL) : partition;
        if (p == Partition.GLOBAL) {
            return new PlanConfig(seed, shuffleBlockShards, uneven, p, 0, mixFraction);
        }
        return new PlanConfig(seed, shuffleBlockShards, uneven, p, canonicalNodes == 0 ? world.nodes() : canonicalNodes, mixFraction);
    }

    /** Whether this config fixes every order without knowing the world ({@link #forWorld} was applied, or it needs none). */
    public boolean definite() {
        return partition == Partition.GLOBAL || (partition == Partition.NODE && canonicalNodes > 0);
    }

    /**
     * The number of canonical nodes the plan is defined over: 1 for GLOBAL (one order for all, which is the
     * node plan of a single canonical node), {@code canonicalNodes} for NODE.
     */
    public int canonical() {
        if (!definite()) {
            throw new IllegalStateException("the plan's partition is not settled (partition " + partition.label() + ", canonical nodes "
                    + canonicalNodes + "): make it definite for the job's world with PlanConfig.forWorld first");
        }
        return partition == Partition.GLOBAL ? 1 : canonicalNodes;
    }
}
