/**
 * {@code ferry serve}: the S3-compatible daemon on Netty ({@code Daemon}, {@code S3Handler}, {@code S3Service}),
 * ferry's plan and status API ({@code FerryApi}), registered jobs ({@code Job}, {@code RunningJob}) and the
 * daemon's config ({@code ServeConfig}); see docs/daemon.md. Depends on core, s3, embedded, Netty and Jackson.
 * Benchmark harnesses live apart, in {@code serve.bench}.
 */
package dev.ferry.serve;
