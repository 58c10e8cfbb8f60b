/**
 * The daemon's Netty front, arranged as Netty's {@code HttpStaticFileServer} example: {@code S3Server}
 * (bootstrap), {@code S3ServerInitializer} (each connection's pipeline) and its stages: {@code HeaderTimeout},
 * the HTTP codec, {@code PipelinedRequests} (one exchange at a time; {@code BodyDrain} after an early error) and
 * {@code S3Handler} (a request's target, {@code RequestTarget}; its signature and body; the operation in
 * {@code serve.s3} or the jobs' {@code ControlApi}), whose replies {@code ReplyWriter} writes (sendfile, or streamed
 * with back-pressure). {@code ServeContext} is what the handlers share; {@code SpoolFolder} where bodies lie;
 * {@code ServeStats} what the front has served (the status reads it as a {@code jobs.ServeSnapshot}). Depends on
 * {@code serve.s3}, {@code serve.jobs} and {@code serve.protocol}.
 */
package dev.ferry.serve.front;
