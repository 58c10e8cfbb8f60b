/**
 * Harnesses that run real daemons to measure them, apart from the daemon itself: {@link
 * dev.ferry.serve.bench.LoopbackCluster}, N daemons on loopback ports over one origin folder, as one regional
 * group or each on its own (what {@code ferry bench group} and the group tests run). Depends on the daemon's
 * public Java API ({@code Daemon}, {@code ServeConfig}, {@code jobs.Job}, {@code jobs.RunningJob},
 * {@code node.Counters}), core and the JDK; nothing in {@code dev.ferry.serve} depends on it.
 */
package dev.ferry.serve.bench;
