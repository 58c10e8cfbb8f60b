package dev.ferry.serve.jobs;

import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.plan.Shard;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.ObjectKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A daemon over a folder store holding a small dataset and its manifest at {@code data/manifest.json}, for registrations by manifest key. */
final class ManifestDaemon {
    private ManifestDaemon() {
    }

    /**
     * {@code shards} objects {@code data/s-N.bin} of {@code shardBytes} zero bytes, {@code samples} samples each, and
     * their manifest (with the ETags the daemon reads); no prefetching, so what a test asserts is what its reads did.
     */
    static DaemonFixture start(Path dir, int shards, int shardBytes, int samples) throws Exception {
        DaemonFixture ferry = DaemonFixture.overFolder(dir).with("prefetch-bytes", "0").start();
        List<Shard> manifest = new ArrayList<>();
        for (int i = 0; i < shards; i++) {
            Files.write(ferry.root.resolve("data/s-" + i + ".bin"), new byte[shardBytes]);
            ObjectKey key = ObjectKey.of("data", "s-" + i + ".bin");
            manifest.add(new Shard(key, shardBytes, ferry.daemon.node().stack().cache().head(key).etag(), samples));
        }
        ManifestJson.write(new Manifest(manifest), "test", ferry.root.resolve("data/manifest.json"));
        return ferry;
    }
}
