package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.S3Error;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.Map;

/**
 * GetObject's {@code response-*} query parameters: the client names the headers the answer carries
 * ({@code response-content-type=text/plain} sets Content-Type), as S3 does for presigned downloads.
 */
final class ResponseOverrides {
    private static final Map<String, String> HEADERS = Map.of(
            "response-content-type", "Content-Type",
            "response-content-disposition", "Content-Disposition",
            "response-cache-control", "Cache-Control",
            "response-content-encoding", "Content-Encoding",
            "response-content-language", "Content-Language",
            "response-expires", "Expires");

    private ResponseOverrides() {
    }

    /** Sets the headers the request's {@code response-*} parameters name. */
    static void apply(S3Service.Request r, HttpHeaders h) throws S3Error {
        for (Map.Entry<String, String> e : HEADERS.entrySet()) {
            String value = r.param(e.getKey());
            if (value == null) {
                continue;
            }
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if ((c < 0x20 && c != '\t') || c == 0x7f) {
                    throw S3Error.invalidArgument(e.getKey() + " holds a control character, which no header may");
                }
            }
            h.set(e.getValue(), value);
        }
    }
}
