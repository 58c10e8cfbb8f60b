package dev.ferry.serve.jobs;

import static io.netty.handler.codec.http.HttpMethod.POST;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The write-back fence, {@code POST /_ferry/v1/flush}, through {@link ControlApi#handle}: it answers once every write
 * acknowledged before it is in the store, listing each with its durability. A real node with write-back over a folder
 * store.
 */
class FlushApiTest {
    @Test
    void flush_waitsForEveryWriteBeforeIt_andListsEachAsDurable(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir, Map.of("write-back", "true"))) {
            ObjectKey key = ObjectKey.of("data", "checkpoint-1.pt");
            n.node.stack().top().put(key, PutBody.ofBytes(new byte[5000]));

            JsonNode flush = new ApiCalls(n).ok(POST, "/_ferry/v1/flush?timeout_ms=60000", null);

            assertThat(flush.get("complete").asBoolean()).isTrue();
            assertThat(flush.get("write_back").asBoolean()).isTrue();
            assertThat(flush.get("first_error").isNull()).isTrue();
            assertThat(flush.get("writes")).hasSize(1);
            JsonNode write = flush.get("writes").get(0);
            assertThat(write.get("bucket").asText() + "/" + write.get("key").asText()).isEqualTo("data/checkpoint-1.pt");
            assertThat(write.get("size").asLong()).isEqualTo(5000);
            assertThat(write.get("durability").asText()).isEqualTo("durable");
            assertThat(Files.size(n.root.resolve("data/checkpoint-1.pt"))).as("in the store when the fence answers").isEqualTo(5000);
        }
    }

    @Test
    void flush_ofABucketAndPrefix_waitsForTheWritesUnderIt_only(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir, Map.of("write-back", "true"))) {
            n.node.stack().top().put(ObjectKey.of("data", "run-1/step-1/__0_0.distcp"), PutBody.ofBytes(new byte[3000]));
            n.node.stack().top().put(ObjectKey.of("data", "run-1/step-2/__0_0.distcp"), PutBody.ofBytes(new byte[4000]));

            JsonNode flush = new ApiCalls(n).ok(POST, "/_ferry/v1/flush?timeout_ms=60000&bucket=data&prefix=run-1/step-1/", null);

            assertThat(flush.get("complete").asBoolean()).isTrue();
            assertThat(flush.get("writes")).as("the fence lists the writes it waited for").hasSize(1);
            assertThat(flush.get("writes").get(0).get("key").asText()).isEqualTo("run-1/step-1/__0_0.distcp");
            assertThat(Files.size(n.root.resolve("data/run-1/step-1/__0_0.distcp"))).isEqualTo(3000);

            S3Error e = new ApiCalls(n).refused(POST, "/_ferry/v1/flush?prefix=run-1/", null);
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.getMessage()).isEqualTo("a flush of a prefix names its bucket too (bucket=...&prefix=...)");
        }
    }

    @Test
    void flush_withATimeoutOutOfRange_is400NamingIt(@TempDir Path dir) throws Exception {
        try (JobsNode n = JobsNode.start(dir, Map.of("write-back", "true"))) {
            S3Error e = new ApiCalls(n).refused(POST, "/_ferry/v1/flush?timeout_ms=-1", null);

            assertThat(e.status()).isEqualTo(400);
            assertThat(e.getMessage()).isEqualTo("timeout_ms must be 0 to 86400000: -1");
        }
    }
}
