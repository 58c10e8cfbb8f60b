/**
 * {@code ferry bench}: the end-to-end benchmarks anyone can rerun, whose output BENCHMARKS.md records
 * ({@code BenchCommand} and one subcommand per harness: {@code get}, {@code cold}, {@code restart},
 * {@code loader}, {@code writeback}, {@code group}), with what they drive beside them ({@code LoopbackCluster}:
 * N daemons in process, for {@code group} and the group tests) and what a run needs: its {@code WorkDir} and the
 * {@code Machine} line of its report (the demo borrows both). {@code restart} fills its cache folder with
 * {@code cache.SyntheticBlocks}, the one piece that must know the local tier's block format. JMH
 * microbenchmarks are the {@code bench} module. Depends on core, s3, embedded, serve's public Java API
 * ({@code Daemon}, {@code ServeConfig}, {@code jobs.Job}, {@code jobs.RunningJob}, {@code node.Counters}) and
 * {@code cli.errors}; {@code dev.ferry.cli} depends on it, not the other way.
 */
package dev.ferry.cli.bench;
