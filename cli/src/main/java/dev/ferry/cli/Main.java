package dev.ferry.cli;

import dev.ferry.cli.bench.BenchCommand;
import dev.ferry.cli.errors.Errors;
import dev.ferry.cli.errors.UserError;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Entry point of the {@code ferry} command. */
@Command(name = "ferry",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Feeds ML training from object storage through a node-local cache tier.",
        subcommands = {DemoCommand.class, ServeCommand.class, MountCommand.class, StatusCommand.class, FlushCommand.class, WarmCommand.class,
                CacheCommand.class, StoreCommand.class, IndexCommand.class, SimCommand.class, VerifyCommand.class, BenchCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {
    @Option(names = "--verbose", scope = CommandLine.ScopeType.INHERIT,
            description = "Print stack traces with errors, and debug logs.")
    boolean verbose;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line and returns the exit code (for tests: nothing calls System.exit here). */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        boolean verbose = java.util.Arrays.asList(args).contains("--verbose");
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "debug" : "warn");
        }
        CommandLine cli = new CommandLine(new Main());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            err.println("ferry: " + Errors.oneSentence(e));
            if (verbose) {
                e.printStackTrace(err);
            }
            return e instanceof UserError ue ? ue.exitCode() : 1;
        });
        cli.setParameterExceptionHandler((e, a) -> {
            String name = e.getCommandLine().getCommandSpec().qualifiedName();
            String suggestion = "";
            if (e instanceof CommandLine.UnmatchedArgumentException unmatched && !unmatched.getSuggestions().isEmpty()) {
                // picocli's nearest subcommands or options to what was typed
                suggestion = " Did you mean " + unmatched.getSuggestions().stream().limit(3)
                        .map(s -> "'" + name + " " + s + "'").collect(java.util.stream.Collectors.joining(" or "))
                        + "?";
            }
            err.println("ferry: " + Errors.oneSentence(e) + suggestion + " Try '" + name + " --help'.");
            return 2;
        });
        return cli.execute(args);
    }

    /** Reads the version Maven wrote into the jar's resources. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("/ferry-version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            }
            return new String[] {"ferry " + p.getProperty("version", "unknown") + " (Java " + Runtime.version() + ")"};
        }
    }
}
