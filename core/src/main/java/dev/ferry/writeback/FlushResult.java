package dev.ferry.writeback;

import java.util.List;

/**
 * What a fence found: {@code complete} when every write acknowledged before it is durable; otherwise the
 * statuses say which are still local or failed, and {@code firstError} the first failure.
 */
public record FlushResult(boolean complete, List<WriteStatus> writes, String firstError) {
    /** A fence with nothing to wait for (writes go through). */
    public static final FlushResult NONE = new FlushResult(true, List.of(), null);

    public FlushResult {
        writes = List.copyOf(writes);
    }
}
