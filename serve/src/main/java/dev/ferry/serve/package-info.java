/**
 * {@code ferry serve}, the S3-compatible daemon (see docs/daemon.md): {@code Daemon}, the composition root that
 * starts a {@code node.Node}, the {@code jobs} registered on it and the Netty {@code front}, and closes them in
 * reverse; and {@code ServeConfig}, the daemon's settings as one table. Depends on every {@code serve.*} package;
 * none of them depends on this one.
 */
package dev.ferry.serve;
