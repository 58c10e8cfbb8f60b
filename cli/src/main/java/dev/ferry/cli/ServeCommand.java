package dev.ferry.cli;

import dev.ferry.serve.Daemon;
import dev.ferry.serve.ServeConfig;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ferry serve}: the S3-compatible caching daemon. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run the ferry daemon: an S3-compatible endpoint (path-style) in front of the local tier and the object store.",
                "With neither --upstream nor --store-root it fronts the embedded store (cloud profile) over --data-dir.",
                "Every flag is also a key of the YAML --config file (flags win). See docs/daemon.md."})
final class ServeCommand implements Callable<Integer> {
    @Option(names = "--config", paramLabel = "FILE", description = "YAML file of settings (keys as the flags, without --).")
    Path configFile;

    @Option(names = "--upstream", paramLabel = "URL", description = "S3 endpoint to front, e.g. https://s3.eu-west-1.amazonaws.com "
            + "(credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY).")
    String upstream;

    @Option(names = "--store-root", paramLabel = "DIR", description = "A folder to use as the object store (buckets are subfolders).")
    String storeRoot;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "The embedded store's folder (default ~/.ferry/data).")
    String dataDir;

    @Option(names = "--profile", paramLabel = "NAME", description = "Embedded store profile: cloud (default) or none.")
    String profile;

    @Option(names = "--cache-dir", paramLabel = "DIR", description = "The local tier's folder (default ~/.ferry/cache).")
    String cacheDir;

    @Option(names = "--cache-size", paramLabel = "SIZE", description = "Local tier capacity, e.g. 500GiB (default 10GiB).")
    String cacheSize;

    @Option(names = "--block-size", paramLabel = "SIZE", description = "Cache block size (default 4MiB).")
    String blockSize;

    @Option(names = "--prefetch-bytes", paramLabel = "SIZE", description = "How far ahead of a job's position to prefetch (default 256MiB).")
    String prefetchBytes;

    @Option(names = "--port", paramLabel = "N", description = "Port (default 9099; 0 picks a free one).")
    String port;

    @Option(names = "--bind", paramLabel = "ADDR", description = "Address to listen on (default 127.0.0.1). Others need "
            + "--access-key/--secret-key or --insecure.")
    String bind;

    @Option(names = "--access-key", paramLabel = "KEY", description = "Access key clients sign with (AWS Signature V4); also FERRY_ACCESS_KEY.")
    String accessKey;

    @Option(names = "--secret-key", paramLabel = "SECRET", description = "Secret key; also FERRY_SECRET_KEY.")
    String secretKey;

    @Option(names = "--insecure", description = "Allow a non-loopback bind address without credentials (anyone reaching the port can use it).")
    boolean insecure;

    @Option(names = "--write-back", description = "Acknowledge PUTs once on local disk and upload them in the background.")
    boolean writeBack;

    @Option(names = "--group", paramLabel = "URL,...", description = "The regional group: every member daemon's URL, comma-separated, "
            + "in the same order on every node; each object is read from the origin by its owner only.")
    String group;

    @Option(names = "--self", paramLabel = "URL", description = "This daemon's URL as --group lists it (without it: a client of the group).")
    String self;

    @Option(names = "--shared-tier", paramLabel = "DIR", description = "A shared file system's folder, a tier between the group and the origin.")
    String sharedTier;

    @Option(names = "--first-byte-timeout", paramLabel = "DURATION", description = "How long a read waits for the object store to start "
            + "answering, retries included, before the client gets 503 ServiceUnavailable, e.g. 10s (default) or 500ms.")
    String firstByteTimeout;

    @Option(names = "--header-timeout", paramLabel = "DURATION", description = "How long a request's line and headers may take to arrive, "
            + "from their first byte, before the connection is closed (default: 30s).")
    String headerTimeout;

    @Option(names = "--multipart-ttl", paramLabel = "DURATION", description = "How long an unfinished multipart upload is kept "
            + "before its parts are deleted, e.g. 7d (default), 12h.")
    String multipartTtl;
    @Option(names = "--virtual-host", paramLabel = "DOMAIN,...", description = "Domains under which a Host of bucket.DOMAIN is "
            + "virtual-hosted-style addressing of that bucket (default: localhost; an empty value turns it off).")
    String virtualHost;

    @Option(names = "--eviction-follows", paramLabel = "WHOSE", description = "Whose plans eviction follows when several jobs "
            + "are registered: all-jobs (default: every job's future, a block needed by any job is kept by the soonest use) or "
            + "last-report (the job that reported progress last).")
    String evictionFollows;

    @Option(names = "--scratch-bucket", paramLabel = "BUCKET", description = "A bucket kept on this node's disk only and never "
            + "uploaded (PUT, GET, LIST, DELETE work there against local disk).")
    String scratchBucket;

    @Option(names = "--scratch-quota", paramLabel = "SIZE", description = "The scratch bucket's size at most; a write past it gets "
            + "507 InsufficientStorage (default: 10GiB).")
    String scratchQuota;

    @Option(names = "--scratch-ttl", paramLabel = "DURATION", description = "How long a scratch object lives after it was written "
            + "(default: 24h).")
    String scratchTtl;

    @Override
    public Integer call() throws Exception {
        ServeConfig config = config();
        try (Daemon daemon = Daemon.start(config)) {
            System.out.println("ferry serve: " + daemon.endpoint() + " (status page " + daemon.endpoint() + "/_ferry/)");
            System.out.println("  cache " + config.cacheDir() + " (" + config.describe().get("cache-size") + "), upstream: "
                    + (config.upstream() != null ? config.upstream() : config.storeRoot() != null ? config.storeRoot()
                            : "embedded store over " + config.dataDir()));
            System.out.println("  try: aws --endpoint-url " + daemon.endpoint() + " s3 ls");
            System.out.println("ready");
            System.out.flush();
            CountDownLatch stop = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                stop.countDown();
                daemon.close();
            }));
            stop.await();
        } catch (java.io.IOException e) {
            throw new UserError(e.getMessage(), 1);
        }
        return 0;
    }

    ServeConfig config() throws java.io.IOException {
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
        put(settings, "upstream", upstream);
        put(settings, "store-root", storeRoot);
        put(settings, "data-dir", dataDir);
        put(settings, "profile", profile);
        put(settings, "cache-dir", cacheDir);
        put(settings, "cache-size", cacheSize);
        put(settings, "block-size", blockSize);
        put(settings, "prefetch-bytes", prefetchBytes);
        put(settings, "port", port);
        put(settings, "bind", bind);
        put(settings, "access-key", accessKey);
        put(settings, "secret-key", secretKey);
        put(settings, "group", group);
        put(settings, "self", self);
        put(settings, "shared-tier", sharedTier);
        put(settings, "first-byte-timeout", firstByteTimeout);
        put(settings, "header-timeout", headerTimeout);
        put(settings, "multipart-ttl", multipartTtl);
        put(settings, "virtual-host", virtualHost);
        put(settings, "eviction-follows", evictionFollows);
        put(settings, "scratch-bucket", scratchBucket);
        put(settings, "scratch-quota", scratchQuota);
        put(settings, "scratch-ttl", scratchTtl);
        if (insecure) {
            settings.put("insecure", "true");
        }
        if (writeBack) {
            settings.put("write-back", "true");
        }
        try {
            ServeConfig c = ServeConfig.defaults().with(settings);
            c.validate();
            return c;
        } catch (IllegalArgumentException e) {
            throw new UserError(e.getMessage());
        }
    }

    private static void put(Map<String, String> settings, String key, String value) {
        if (value != null) {
            settings.put(key, value);
        }
    }
}
