package dev.ferry.cli;

import dev.ferry.sim.Access;
import dev.ferry.sim.CacheSimulator;
import dev.ferry.cache.policy.Policies;
import dev.ferry.sim.SimResult;
import dev.ferry.sim.Sizes;
import dev.ferry.sim.SyntheticTrace;
import dev.ferry.sim.TraceParser;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ferry sim}: replays a trace, or synthetic shuffled epochs, through the shipped eviction policies. */
@Command(name = "sim", mixinStandardHelpOptions = true,
        description = {"Replay an access trace through the cache's eviction policies (the very classes the local tier runs).",
                "Trace format: one access per line, 'KEY SIZE_BYTES'; lines starting with # are comments."})
final class SimCommand implements Callable<Integer> {
    @Option(names = "--trace", paramLabel = "FILE", description = "The trace to replay.")
    Path trace;

    @Option(names = "--synthetic", description = "Build a trace of shuffled epochs instead (a fresh permutation every epoch).")
    boolean synthetic;

    @Option(names = "--objects", defaultValue = "1000", description = "Synthetic: number of objects (default: ${DEFAULT-VALUE}).")
    int objects;

    @Option(names = "--epochs", defaultValue = "3", description = "Synthetic: number of epochs (default: ${DEFAULT-VALUE}).")
    int epochs;

    @Option(names = "--size-bytes", defaultValue = "1048576", description = "Synthetic: size of each object (default: ${DEFAULT-VALUE}).")
    long sizeBytes;

    @Option(names = "--seed", defaultValue = "1", description = "Synthetic: shuffle seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--cache-size", paramLabel = "SIZE", description = "Cache capacity, e.g. 500MB, 4GiB, 1048576.")
    String cacheSize;

    @Option(names = "--cache-fraction", paramLabel = "F", description = "Cache capacity as a fraction of the trace's distinct bytes, e.g. 0.5.")
    Double cacheFraction;

    @Option(names = "--policies", defaultValue = "lru,pin,sieve,min", split = ",",
            description = "Policies to compare (default: ${DEFAULT-VALUE}; known: lru, pin, sieve, min).")
    List<String> policies;

    @Option(names = "--json", description = "Print JSON instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (synthetic == (trace != null)) {
            throw new UserError("give either --trace FILE or --synthetic");
        }
        if ((cacheSize == null) == (cacheFraction == null)) {
            throw new UserError("give either --cache-size SIZE or --cache-fraction F");
        }
        for (String p : policies) {
            if (!Policies.NAMES.contains(p)) {
                throw new UserError("--policies: unknown policy '" + p + "': use one of " + String.join(", ", Policies.NAMES));
            }
        }
        List<Access> accesses;
        if (synthetic) {
            if (objects < 1 || epochs < 1 || sizeBytes < 0) {
                throw new UserError("--objects and --epochs must be positive and --size-bytes not negative");
            }
            accesses = SyntheticTrace.shuffledEpochs(objects, epochs, sizeBytes, seed);
        } else {
            if (!Files.isRegularFile(trace)) {
                throw new UserError("--trace: no such file: " + trace);
            }
            try {
                accesses = TraceParser.parse(trace);
            } catch (TraceParser.BadTraceException e) {
                throw new UserError(e.getMessage());
            } catch (NoSuchFileException e) {
                throw new UserError("--trace: no such file: " + trace);
            }
        }
        long distinct = accesses.stream().collect(java.util.stream.Collectors.toMap(Access::key, Access::size, Math::max))
                .values().stream().mapToLong(Long::longValue).sum();
        long capacity;
        if (cacheSize != null) {
            try {
                capacity = Sizes.parse(cacheSize);
            } catch (IllegalArgumentException e) {
                throw new UserError("--cache-size: " + e.getMessage());
            }
        } else {
            if (cacheFraction < 0) {
                throw new UserError("--cache-fraction must not be negative: " + cacheFraction);
            }
            capacity = Math.round(distinct * cacheFraction);
        }
        List<String> keys = accesses.stream().map(Access::key).toList();
        List<SimResult> results = new ArrayList<>();
        for (String p : policies) {
            results.add(CacheSimulator.run(accesses, capacity, Policies.create(p, keys)));
        }
        if (json) {
            System.out.println(toJson(results));
        } else {
            System.out.printf(Locale.ROOT, "%d accesses, %s of distinct objects, cache %s (%.0f%%)%n", accesses.size(),
                    Sizes.format(distinct), Sizes.format(capacity), distinct == 0 ? 0 : 100.0 * capacity / distinct);
            System.out.printf(Locale.ROOT, "%-7s %10s %10s %9s %10s %14s%n", "policy", "requests", "hits", "hit rate", "byte hits", "upstream");
            for (SimResult r : results) {
                System.out.printf(Locale.ROOT, "%-7s %10d %10d %8.1f%% %9.1f%% %14s%n", r.policy(), r.requests(), r.hits(),
                        100 * r.hitRate(), 100 * r.byteHitRate(), Sizes.format(r.upstreamBytes()));
            }
        }
        return 0;
    }

    static String toJson(List<SimResult> results) {
        StringBuilder out = new StringBuilder("{\"policies\":[");
        for (int i = 0; i < results.size(); i++) {
            SimResult r = results.get(i);
            out.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                    "{\"policy\":\"%s\",\"requests\":%d,\"hits\":%d,\"hit_rate\":%.6f,\"byte_hit_rate\":%.6f,\"upstream_bytes\":%d}",
                    r.policy(), r.requests(), r.hits(), r.hitRate(), r.byteHitRate(), r.upstreamBytes()));
        }
        return out.append("]}").toString();
    }
}
