package dev.ferry.serve.jobs;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.writeback.FlushResult;
import dev.ferry.serve.node.PeerLevel;
import dev.ferry.writeback.Durability;
import dev.ferry.writeback.WriteBackStore;
import dev.ferry.writeback.WriteStatus;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code POST /_ferry/v1/flush}: write-back's fence, what {@code ferry flush} and a training job's checkpoint call. Thread-safe. */
final class FlushApi {
    static final String PATH = "/_ferry/v1/flush";

    /** Write-back over the node's local tier, or null. */
    private final WriteBackStore writeBack;

    /** Who holds copies of this node's writes (the {@code peer} level), or null. */
    private final PeerLevel peers;

    FlushApi(WriteBackStore writeBack, PeerLevel peers) {
        this.writeBack = writeBack;
        this.peers = peers;
    }

    /**
     * The write-back fence: waits up to {@code timeout_ms} (default 10 minutes) for every write acknowledged before it
     * to be uploaded (with {@code bucket}, those in it; with {@code prefix} too, those whose key starts with it: a
     * checkpoint's files), and lists them with their durability. 200 when all are durable, 504 on timeout, 502 when
     * an upload was refused; without write-back, complete at once.
     */
    Reply flush(Map<String, List<String>> query) throws S3Error, IOException {
        long timeoutMs = ApiJson.param(query, "timeout_ms", 600_000, 0, 86_400_000);
        String bucket = ApiJson.text(query, "bucket");
        String prefix = ApiJson.text(query, "prefix");
        if (prefix != null && bucket == null) {
            throw S3Error.badRequest("InvalidArgument", "a flush of a prefix names its bucket too (bucket=...&prefix=...)");
        }
        ObjectNode out = ApiJson.JSON.createObjectNode();
        if (writeBack == null) {
            out.put("complete", true).put("write_back", false).putArray("writes");
            return Reply.json(HttpResponseStatus.OK, out.toString());
        }
        FlushResult r = bucket == null ? writeBack.flush(Duration.ofMillis(timeoutMs))
                : writeBack.flush(k -> k.bucket().equals(bucket) && (prefix == null || k.key().startsWith(prefix)), Duration.ofMillis(timeoutMs));
        out.put("complete", r.complete()).put("write_back", true).put("first_error", r.firstError());
        ArrayNode writes = out.putArray("writes");
        for (WriteStatus s : r.writes()) {
            // a write still local here that a member holds a copy of is at the peer level
            String holder = peers == null || s.durability() == Durability.DURABLE ? null : peers.holderOf(s.sequence());
            ObjectNode w = writes.addObject().put("bucket", s.key().bucket()).put("key", s.key().key()).put("size", s.size())
                    .put("durability", holder != null ? "peer" : s.durability().name().toLowerCase(Locale.ROOT)).put("error", s.error());
            if (holder != null) {
                w.put("peer", holder);
            }
            if (s.delete()) {
                w.put("delete", true);
            }
        }
        // 200 when everything before the fence is durable; 504 on timeout, 502 when an upload was refused
        HttpResponseStatus status = r.firstError() != null ? HttpResponseStatus.BAD_GATEWAY
                : r.complete() ? HttpResponseStatus.OK : HttpResponseStatus.GATEWAY_TIMEOUT;
        return Reply.json(status, out.toString());
    }
}
