/**
 * The embedded object store: a real S3-compatible HTTP server on loopback (s3proxy over a directory) and the
 * cloud profile that makes it behave like object storage (first-byte latency, bandwidth caps, per-prefix
 * request limits answered with 503 SlowDown). Depends on ferry-core and s3proxy; kept apart because s3proxy
 * brings Jetty, Guava and Jackson 3.
 */
package dev.ferry.embedded;
