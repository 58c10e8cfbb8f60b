package dev.ferry.serve.node;

import dev.ferry.cache.CachingStore;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.Prices;
import dev.ferry.store.chain.GovernedStore;
import dev.ferry.store.chain.MeteredStore;
import dev.ferry.tier.NodeStores;
import dev.ferry.writeback.Scratch;
import dev.ferry.writeback.WriteBackStore;

/**
 * A node's stores as it built them, bottom to top, as the layers above use them: the S3 semantics read and write
 * through them, the status reads their counters, a registration reads a manifest through {@link #top()}. Immutable;
 * the stores are thread-safe.
 *
 * @param origin         the store at the bottom, as built
 * @param meter          what the origin saw (requests, egress, its cost): the chain's meter
 * @param governor       the chain's prefix governor (its rate and concurrency per prefix)
 * @param prices         what the meter counts the cost with
 * @param stores         the door the S3 semantics read and write through ({@link NodeStores}): it decides which store answers
 * @param cache          the local tier, for the jobs, the plans and the status (its counters, its ledger, trusted versions)
 * @param writeBack      write-back over the local tier, or null, for the status and the flush API
 * @param localMultipart multipart uploads staged locally under write-back, or null
 */
public record NodeStack(Origin origin, MeteredStore meter, GovernedStore governor, Prices prices, NodeStores stores, CachingStore cache,
        WriteBackStore writeBack, LocalMultipart localMultipart) {
    /** What reads and writes go to: write-back, else the local tier. */
    public ObjectStore top() {
        return stores.top();
    }

    /** The store right under the local tier: the group with hints, the shared tier, or the bounded chain. */
    public ObjectStore belowCache() {
        return stores.below();
    }

    /** The scratch bucket, or null. */
    public Scratch scratch() {
        return stores.scratch();
    }

    /**
     * What the governor is doing on the prefixes it held back (SlowDowns seen), in words: for each, its rate and
     * requests at a time now; "" when none was throttled.
     */
    public String governorSummary() {
        StringBuilder out = new StringBuilder();
        governor.state().forEach((prefix, st) -> {
            if (st.throttles() > 0) {
                out.append(out.isEmpty() ? "" : "; ").append(String.format(java.util.Locale.ROOT,
                        "on %s it now sends at most %.0f requests/s, %.0f at a time, after %d SlowDowns", prefix, st.rate(),
                        st.concurrencyLimit(), st.throttles()));
            }
        });
        return out.toString();
    }

    /** What a byte out of the origin costs, in USD (GB as AWS bills it: 10^9 bytes). */
    public double egressCostPerByte() {
        return prices.egressPerByte();
    }
}
