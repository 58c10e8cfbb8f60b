package dev.ferry.serve.node;

import dev.ferry.cache.BlockId;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.ResumingStream;
import dev.ferry.store.tier.GroupStore;
import dev.ferry.store.tier.Rendezvous;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToIntFunction;

/**
 * Peer reads steered by the plan: before a block goes to its owner, it is asked of the member that read
 * it last epoch (every node's plan is known: it follows from the manifest, seed and world), which may still
 * hold it. That member answers only from its own disk ({@code x-ferry-cached-only}), never by fetching; when
 * it does not hold the block, or fails, the read goes on to the group as usual, and a stream that breaks
 * halfway finishes from the group. Thread-safe.
 */
public final class HintedStore extends ForwardingObjectStore {
    private final GroupStore group;
    private final List<ObjectStore> cachedOnly;
    private final int blockSize;
    private final ToIntFunction<BlockId> holderOf;
    private final LongAdder hintedBytes = new LongAdder();
    private final LongAdder hintedReads = new LongAdder();
    private final LongAdder hintMisses = new LongAdder();

    /** Reads served by last epoch's readers, and asks they could not serve. */
    public record HintStats(long bytes, long reads, long misses) {
    }

    HintedStore(GroupStore group, List<ObjectStore> cachedOnly, int blockSize, ToIntFunction<BlockId> holderOf) {
        super(group);
        this.group = group;
        this.cachedOnly = cachedOnly;
        this.blockSize = blockSize;
        this.holderOf = holderOf;
    }

    public HintStats stats() {
        return new HintStats(hintedBytes.sum(), hintedReads.sum(), hintMisses.sum());
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        if (request.ifMatch() == null || request.range() == null) {
            return delegate.get(request);
        }
        int holder = holderOf.applyAsInt(new BlockId(request.key(), request.ifMatch(), request.range().offset() / blockSize));
        if (holder < 0 || holder >= cachedOnly.size() || cachedOnly.get(holder) == null
                || holder == group.ring().owner(Rendezvous.keyOf(request.key()))) {
            return delegate.get(request); // no hint, this node itself, or the owner: the group's own route
        }
        ObjectContent c;
        try {
            c = cachedOnly.get(holder).get(request);
        } catch (IOException e) {
            hintMisses.increment();
            return delegate.get(request);
        }
        hintedReads.increment();
        // counted while it comes from the holder; if it breaks, the rest comes through the group
        boolean[] fromHolder = {true};
        return new ObjectContent(c.meta(), c.range(), new ResumingStream("the holder's stream of " + request.key(), c.range(), c.stream(),
                (rest, e) -> {
                    if (!fromHolder[0]) {
                        throw e;
                    }
                    fromHolder[0] = false;
                    return delegate.get(request.withRange(rest)).stream();
                }, n -> {
                    if (fromHolder[0]) {
                        hintedBytes.add(n);
                    }
                }));
    }

    @Override
    public void close() throws IOException {
        for (ObjectStore s : cachedOnly) {
            if (s != null) {
                s.close();
            }
        }
        super.close();
    }
}
