package dev.ferry.serve.protocol;

import dev.ferry.store.ObjectContent;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;

/** What the daemon answers: a body in memory, a stream from the store, or file regions sent with sendfile. */
public sealed interface Reply {
    HttpResponseStatus status();

    HttpHeaders headers();

    /** A whole body (XML, JSON, HTML, or nothing); {@code headOnly} sends the headers with the body's length. */
    record Full(HttpResponseStatus status, HttpHeaders headers, byte[] body, boolean headOnly) implements Reply {
    }

    /** A body read from the store as it is sent (a miss); the content is closed when sent or abandoned. */
    record Streamed(HttpResponseStatus status, HttpHeaders headers, ObjectContent content) implements Reply {
    }

    /**
     * A body whose every byte is in local block files (a read of the local tier that went no further than its disk,
     * {@link dev.ferry.store.GetRequest.Reach#CACHED}): its regions are sent file-to-socket at once, never waiting; the
     * content is closed once they are written.
     */
    record Files(HttpResponseStatus status, HttpHeaders headers, ObjectContent content) implements Reply {
        public Files {
            if (!(content.stream() instanceof dev.ferry.store.FileRegionReadable)) {
                throw new IllegalArgumentException("a reply of files needs a read of file regions, not " + content.stream().getClass());
            }
        }
    }

    static Full xml(HttpResponseStatus status, Xml xml) {
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("Content-Type", "application/xml");
        return new Full(status, h, xml.bytes(), false);
    }

    static Full json(HttpResponseStatus status, String json) {
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("Content-Type", "application/json");
        return new Full(status, h, json.getBytes(StandardCharsets.UTF_8), false);
    }

    static Full empty(HttpResponseStatus status) {
        return new Full(status, new DefaultHttpHeaders(), new byte[0], false);
    }

    static Full error(S3Error e, String resource, String requestId, boolean headOnly) {
        Xml x = new Xml().open("Error").element("Code", e.code()).element("Message", e.getMessage())
                .element("Resource", resource).element("RequestId", requestId).close("Error");
        HttpHeaders h = new DefaultHttpHeaders();
        h.set("Content-Type", "application/xml");
        byte[] body = x.bytes();
        return new Full(HttpResponseStatus.valueOf(e.status()), h, headOnly ? new byte[0] : body, false);
    }
}
