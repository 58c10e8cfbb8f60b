package dev.ferry.serve.node;

import dev.ferry.cache.CacheStats;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.shared.GroupStore;
import dev.ferry.store.shared.SharedTierStore;

/**
 * The node's counters at one moment: where an epoch's egress and hit rate are measured from. {@code peers} and
 * {@code hints} are null outside a regional group, {@code shared} without a shared tier.
 */
public record Counters(MeterSnapshot meter, CacheStats cache, GroupStore.GroupStats peers, HintedStore.HintStats hints,
        SharedTierStore.SharedStats shared, long nanos) {
    /** Bytes read from the shared tier (0 without one). */
    public long sharedBytes() {
        return shared == null ? 0 : shared.bytesFromTier();
    }

    /** Bytes read from the group's other members (0 outside a group). */
    public long peerBytes() {
        return peers == null ? 0 : peers.peerBytes();
    }

    /** Bytes read from the member that read them last epoch (0 outside a group). */
    public long hintedBytes() {
        return hints == null ? 0 : hints.bytes();
    }
}
