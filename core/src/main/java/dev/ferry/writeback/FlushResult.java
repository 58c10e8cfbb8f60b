package dev.ferry.writeback;

import java.util.List;

/**
 * What a fence found: {@code complete} when every write acknowledged before it is durable; otherwise the
 * statuses say which are still local or failed, and {@code firstError} the first failure.
 */
public record FlushResult(boolean complete, List<WriteStatus> writes, String firstError) {
    public FlushResult {
        writes = List.copyOf(writes);
    }
}
