package dev.ferry.serve.front;

import dev.ferry.serve.jobs.ControlApi;
import dev.ferry.serve.protocol.SigV4;
import dev.ferry.serve.protocol.VirtualHosts;
import dev.ferry.serve.s3.S3Service;
import dev.ferry.time.Clock;
import java.nio.file.Path;
import java.util.concurrent.Executor;

/**
 * What every connection's handler shares. {@code sigV4} is null when requests need no signature; {@code clock} is
 * the daemon's (a request's time, its signature's, its reply's Date).
 */
public record ServeContext(S3Service s3, ControlApi api, SigV4 sigV4, Path spoolDir, Limits limits, Executor executor, ServeStats stats,
        VirtualHosts virtualHosts, Clock clock) {
    /** Request limits: headers (line and fields), XML and API bodies, one PUT or part. */
    public record Limits(int maxHeaderBytes, long maxXmlBytes, long maxObjectBytes) {
        static final Limits DEFAULT = new Limits(16 * 1024, 1 << 20, 5L << 30);
    }
}
