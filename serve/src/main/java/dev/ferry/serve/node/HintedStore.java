package dev.ferry.serve.node;

import dev.ferry.cache.BlockId;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.ResumingStream;
import dev.ferry.store.shared.GroupStore;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Peer reads steered by the plan: before a block goes to its owner, it is asked of the member that read
 * it last epoch (every node's plan is known: it follows from the manifest, seed and world), which may still
 * hold it. That member answers only from its own disk ({@code x-ferry-cached-only}), never by fetching; when
 * it does not hold the block, or fails, the read goes on to the group as usual, and a stream that breaks
 * halfway finishes from the group. Who read what is the plans' to say ({@link BlockHolders}): until they are
 * given, every read takes the group's route. Thread-safe.
 */
public final class HintedStore extends ForwardingObjectStore {
    private final GroupStore group;
    private final Function<String, ObjectStore> connect;
    /** A cached-only client per member asked so far, by URL. */
    private final Map<String, ObjectStore> cachedOnly = new ConcurrentHashMap<>();
    private final int blockSize;
    private volatile BlockHolders holders = BlockHolders.NONE;
    private volatile boolean closed;
    private final LongAdder hintedBytes = new LongAdder();
    private final LongAdder hintedReads = new LongAdder();
    private final LongAdder hintMisses = new LongAdder();

    /** Reads served by last epoch's readers, and asks they could not serve. */
    public record HintStats(long bytes, long reads, long misses) {
    }

    /** {@code connect}: a client to a member's URL that asks for blocks on that member's disk only. */
    HintedStore(GroupStore group, Function<String, ObjectStore> connect, int blockSize) {
        super(group);
        this.group = group;
        this.connect = connect;
        this.blockSize = blockSize;
    }

    /** Who read each block last epoch, from now on. */
    void askFirst(BlockHolders holders) {
        this.holders = Objects.requireNonNull(holders, "holders is null");
    }

    public HintStats stats() {
        return new HintStats(hintedBytes.sum(), hintedReads.sum(), hintMisses.sum());
    }

    @Override
    public ObjectContent get(GetRequest request) throws IOException {
        if (request.ifMatch() == null || request.range() == null) {
            return delegate.get(request);
        }
        String holder = holders.holderOf(new BlockId(request.key(), request.ifMatch(), request.range().offset() / blockSize));
        if (holder == null || closed || holder.equals(group.self()) || holder.equals(group.ownerOf(request.key()))
                || !group.isUp(holder)) {
            return delegate.get(request); // no hint, this node itself, the owner, or gone: the group's own route
        }
        ObjectContent c;
        try {
            c = cachedOnly.computeIfAbsent(holder, connect).get(request);
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
        closed = true;
        for (ObjectStore s : cachedOnly.values()) {
            s.close();
        }
        super.close();
    }
}
