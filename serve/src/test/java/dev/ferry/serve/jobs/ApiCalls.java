package dev.ferry.serve.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import io.netty.handler.codec.http.HttpMethod;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ferry's own API over a {@link JobsNode}, called as the front calls it ({@link ControlApi#handle}), with no socket
 * between: a request is a method, a path with its query, and a body; an answer is the reply, or the {@link S3Error}
 * the front would turn into {@code {"error": ...}}.
 */
final class ApiCalls {
    static final URI ENDPOINT = URI.create("http://127.0.0.1:9099");
    static final ServeSnapshot SERVED = new ServeSnapshot(12, 1, 0, 4096, 2048, 0, 3, 0.5, 2.25);

    final ControlApi api;

    ApiCalls(JobsNode n) {
        this.api = new ControlApi(n.node, n.jobs, n.registry, () -> SERVED, () -> ENDPOINT);
    }

    /** The reply to {@code method target} ({@code target}: a path, maybe with a query) with {@code body} (null: none). */
    Reply.Full call(HttpMethod method, String target, String body, ClientGone gone) throws S3Error, IOException {
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        Map<String, List<String>> query = new LinkedHashMap<>();
        if (q >= 0) {
            for (String pair : target.substring(q + 1).split("&")) {
                int eq = pair.indexOf('=');
                query.put(eq < 0 ? pair : pair.substring(0, eq), List.of(eq < 0 ? "" : pair.substring(eq + 1)));
            }
        }
        byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        return (Reply.Full) api.handle(method, path, query, bytes, gone);
    }

    Reply.Full call(HttpMethod method, String target, String body) throws S3Error, IOException {
        return call(method, target, body, ClientGone.NEVER);
    }

    /** The JSON of a 200 answer. */
    JsonNode ok(HttpMethod method, String target, String body) throws S3Error, IOException {
        Reply.Full reply = call(method, target, body);
        assertThat(reply.status().code()).as(text(reply)).isEqualTo(200);
        assertThat(reply.headers().get("Content-Type")).isEqualTo("application/json");
        return ApiJson.JSON.readTree(reply.body());
    }

    /** The error a request is refused with. */
    S3Error refused(HttpMethod method, String target, String body) {
        S3Error e = catchThrowableOfType(S3Error.class, () -> call(method, target, body));
        assertThat(e).as("%s %s is refused", method, target).isNotNull();
        return e;
    }

    static String text(Reply.Full reply) {
        return new String(reply.body(), StandardCharsets.UTF_8);
    }
}
