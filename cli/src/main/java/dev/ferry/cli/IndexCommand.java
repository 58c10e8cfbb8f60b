package dev.ferry.cli;

import dev.ferry.cli.errors.UserError;
import dev.ferry.loader.Indexer;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.chain.ChainConfig;
import dev.ferry.store.chain.StoreChain;
import dev.ferry.util.Sizes;
import java.net.URI;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code ferry index}: writes the manifest of a dataset: the version a run pins. */
@Command(name = "index", mixinStandardHelpOptions = true,
        header = "Write the manifest of a dataset in object storage.",
        description = {"List a dataset in object storage and write its manifest: every object with size and ETag,",
                "tar shards indexed by sample (they are read once). The manifest is the dataset version a run pins."})
final class IndexCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "s3://BUCKET/PREFIX", description = "Where the dataset is.")
    String location;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "Where to write the manifest (JSON).")
    Path output;

    @Option(names = "--endpoint", paramLabel = "URL", description = "An S3-compatible endpoint (default: AWS S3).")
    URI endpoint;

    @Option(names = "--region", defaultValue = "us-east-1", description = "Region (default: ${DEFAULT-VALUE}).")
    String region;

    @Override
    public Integer call() throws Exception {
        if (!location.startsWith("s3://")) {
            throw new UserError("the dataset location must look like s3://BUCKET/PREFIX, not '" + location + "'");
        }
        String rest = location.substring("s3://".length());
        int slash = rest.indexOf('/');
        String bucket = slash < 0 ? rest : rest.substring(0, slash);
        String prefix = slash < 0 ? "" : rest.substring(slash + 1);
        try {
            ObjectKey.validateBucket(bucket);
        } catch (IllegalArgumentException e) {
            throw new UserError(location + ": " + e.getMessage());
        }
        S3StoreConfig config = endpoint == null ? S3StoreConfig.aws().withRegion(region) : Stores.forEndpoint(endpoint).withRegion(region);
        AtomicLong objects = new AtomicLong();
        Manifest manifest;
        try (StoreChain store = StoreChain.over(new S3ObjectStore(config), ChainConfig.DEFAULT)) {
            manifest = Indexer.index(store, bucket, prefix, m -> {
                if (objects.incrementAndGet() % 100 == 0) {
                    System.err.println("indexed " + objects.get() + " objects ...");
                }
            });
        }
        ManifestJson.write(manifest, location, output);
        System.out.println("indexed " + manifest.shards().size() + " objects, " + manifest.totalSamples() + " samples, "
                + Sizes.format(manifest.totalBytes()) + " under " + location + " -> " + output);
        return 0;
    }
}
