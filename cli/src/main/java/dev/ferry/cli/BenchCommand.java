package dev.ferry.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code ferry bench}: placeholder replaced below. */
@Command(name = "bench", mixinStandardHelpOptions = true, description = "Run a benchmark.")
final class BenchCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("bench is not written yet");
    }
}
