/**
 * The daemon's Netty front, arranged as Netty's {@code HttpStaticFileServer} example: {@code S3Server}
 * (bootstrap), {@code S3ServerInitializer} (each connection's pipeline, with {@code HeaderTimeout}) and
 * {@code S3Handler} (a request to {@code serve.s3} or to the jobs' {@code ControlApi}, and its reply: sendfile
 * or streamed); {@code ServeContext} is what the handlers share. Depends on {@code serve.s3}, {@code serve.jobs},
 * {@code serve.node} and {@code serve.protocol}.
 */
package dev.ferry.serve.front;
