/**
 * {@code ferry bench}: the end-to-end benchmarks anyone can rerun, whose output BENCHMARKS.md records
 * ({@code BenchCommand} and one subcommand per harness: {@code get}, {@code cold}, {@code restart},
 * {@code loader}, {@code writeback}, {@code group}), with what a run needs: its {@code WorkDir} and the
 * {@code Machine} line of its report (the demo borrows both). The other harnesses live with what they drive:
 * {@code serve.bench.LoopbackCluster} (N daemons, for {@code group}), {@code cache.RestartBenchmark} (writes the
 * local tier's own block format, for {@code restart}); JMH microbenchmarks are the {@code bench} module.
 * Depends on core, s3, embedded, serve and {@code cli.errors}; {@code dev.ferry.cli} depends on it, not the
 * other way.
 */
package dev.ferry.cli.bench;
