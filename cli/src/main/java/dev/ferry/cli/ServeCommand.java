package dev.ferry.cli;

import dev.ferry.cli.errors.UserError;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.serve.Daemon;
import dev.ferry.serve.ServeConfig;
import dev.ferry.serve.node.RegionalGroup;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code ferry serve}: the S3-compatible caching daemon. Only {@code --config} is declared here: the flag of every
 * setting comes from {@link ServeConfig}'s table ({@link SettingFlags}).
 */
@Command(name = "serve", mixinStandardHelpOptions = true, modelTransformer = ServeCommand.Flags.class,
        description = {"Run the ferry daemon: an S3-compatible endpoint (path-style) in front of the local tier and the object store.",
                "With neither --upstream nor --store-root it fronts the embedded store (cloud profile) over --data-dir.",
                "Every flag is also a key of the YAML --config file (flags win). See docs/daemon.md."})
final class ServeCommand implements Callable<Integer> {
    @Option(names = "--config", paramLabel = "FILE", description = "YAML file of settings (keys as the flags, without --).")
    Path configFile;

    @Option(names = "--create", description = "Create the --store-root directory if it is missing (else a missing one is an error).")
    boolean create;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        ServeConfig config = config();
        if (config.storeRoot() != null) {
            Folders.requireOrCreate(config.storeRoot(), "--store-root", create);
        }
        try (Daemon daemon = Daemon.start(config)) {
            if (daemon.node().stack().origin().store() instanceof S3ObjectStore s3 && config.upstream() != null) {
                // said before "ready": a daemon that cannot use its upstream does not start
                S3ObjectStore.Probe probe = s3.probe();
                String upstream = dev.ferry.util.Secrets.shown(config.upstream());
                if (probe.fatal()) {
                    throw new UserError("the upstream " + upstream + " cannot be used: " + probe.problem() + ".", 1);
                }
                if (probe.problem() != null) {
                    System.out.println("  warning: the upstream " + upstream + ": " + probe.problem());
                }
            }
            System.out.println("ferry serve: " + daemon.endpoint() + " (status page " + daemon.endpoint() + "/_ferry/)");
            System.out.println("  cache " + config.cacheDir() + " (" + config.describe().get("cache-size") + "), upstream: "
                    + (config.upstream() != null ? dev.ferry.util.Secrets.shown(config.upstream()) : config.storeRoot() != null ? config.storeRoot()
                            : "embedded store over " + config.dataDir()));
            RegionalGroup group = daemon.node().group();
            if (group != null) {
                String self = group.self();
                System.out.println("  group " + group.source() + ": " + group.members().size() + " members now, "
                        + (self == null ? "this daemon a client of the group" : "this daemon " + self));
            }
            System.out.println("  try: aws --endpoint-url " + daemon.endpoint() + " s3 ls");
            System.out.println("ready");
            System.out.flush();
            CountDownLatch stop = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                stop.countDown();
                daemon.close();
            }));
            stop.await();
        } catch (IOException e) {
            throw new UserError(e.getMessage(), 1);
        }
        return 0;
    }

    ServeConfig config() throws IOException {
        Map<String, String> settings = new LinkedHashMap<>();
        if (configFile != null) {
            settings.putAll(ServeConfig.readFile(configFile));
        }
        if (System.getenv("FERRY_ACCESS_KEY") != null) {
            settings.put("access-key", System.getenv("FERRY_ACCESS_KEY"));
        }
        if (System.getenv("FERRY_SECRET_KEY") != null) {
            settings.put("secret-key", System.getenv("FERRY_SECRET_KEY"));
        }
        settings.putAll(SettingFlags.given(spec, ServeConfig.settings()));
        try {
            ServeConfig c = ServeConfig.defaults().with(settings);
            c.validate();
            return c;
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
    }

    /**
     * Adds a flag {@code --KEY} for every setting of {@link ServeConfig}'s table that has one, with the
     * table's parameter label and description: the table is the one place a setting is defined.
     */
    static final class Flags implements CommandLine.IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            SettingFlags.add(spec, ServeConfig.settings());
            return spec;
        }
    }
}
