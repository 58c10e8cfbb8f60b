package dev.ferry.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code ferry demo}: placeholder replaced below. */
@Command(name = "demo", mixinStandardHelpOptions = true, description = "Run the end-to-end demo.")
final class DemoCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UserError("demo is not written yet");
    }
}
