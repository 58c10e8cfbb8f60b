package dev.ferry.serve.node;

import dev.ferry.cache.CachingStore;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.Prices;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackStore;

/**
 * A node's stores as it built them, bottom to top, as the layers above use them: the S3 semantics read and write
 * through them, the status reads their counters, a registration reads a manifest through {@link #top()}. Immutable;
 * the stores are thread-safe.
 *
 * @param origin         the store at the bottom, as built
 * @param meter          what the origin saw (requests, egress, its cost): the chain's meter
 * @param prices         what the meter counts the cost with
 * @param belowCache     the store right under the local tier: the group with hints, the shared tier, or the bounded chain
 * @param cache          the local tier
 * @param writeBack      write-back over the local tier, or null
 * @param localMultipart multipart uploads staged locally under write-back, or null
 * @param scratch        the scratch bucket, or null
 */
public record Tiers(Origin origin, MeteredStore meter, Prices prices, ObjectStore belowCache, CachingStore cache, WriteBackStore writeBack,
        LocalMultipart localMultipart, Scratch scratch) {
    /** What reads and writes go to: write-back, else the local tier. */
    public ObjectStore top() {
        return writeBack != null ? writeBack : cache;
    }

    /** What a byte out of the origin costs, in USD (GB as AWS bills it: 10^9 bytes). */
    public double egressCostPerByte() {
        return prices.egressPerGb() / 1e9;
    }
}
