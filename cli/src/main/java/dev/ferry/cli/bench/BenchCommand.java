package dev.ferry.cli.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code ferry bench}: end-to-end benchmarks that anyone can rerun; BENCHMARKS.md records their output. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "End-to-end benchmarks (figures in BENCHMARKS.md come from these).",
        subcommands = {GetBench.class, ColdBench.class, RestartBench.class, LoaderBench.class, WriteBackBench.class, GroupBench.class})
public final class BenchCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
