package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.PutBody;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ferry index} against the embedded store, in its own process: the manifest matches what was written. */
class IndexTest {
    @TempDir
    Path dir;

    @Test
    void index_writesTheManifestOfWhatIsStored() throws Exception {
        try (EmbeddedStore server = EmbeddedStore.start(dir.resolve("store"), 0, CloudProfile.none());
                S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(server.endpoint(), "k", "s"))) {
            s3.createBucket("data");
            Manifest written = SyntheticDataset.write(s3, "data", "train", 5, 7, 3000, 9);
            s3.put(dev.ferry.store.ObjectKey.of("data", "other/readme.txt"), PutBody.ofBytes("not in the dataset".getBytes()));
            Path out = dir.resolve("manifest.json");
            Path log = dir.resolve("index.log");
            Process p = Servers.ferry(log, "index", "s3://data/train/", "--endpoint", server.endpoint().toString(), "-o", out.toString());
            assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
            assertThat(p.exitValue()).as(Files.readString(log)).isZero();
            assertThat(Files.readString(log)).contains("indexed 5 objects, " + written.totalSamples() + " samples");
            assertThat(ManifestJson.read(out)).isEqualTo(written);
        }
    }

    @Test
    void badManifests_sayWhereTheyAreWrong() throws Exception {
        Path bad = Files.writeString(dir.resolve("bad.json"),
                "{\"format\":\"ferry-manifest/1\",\"shards\":[{\"bucket\":\"data\",\"key\":\"a.tar\",\"etag\":\"e\",\"samples\":1}]}");
        assertThatThrownBy(() -> ManifestJson.read(bad)).hasMessage(bad + ": shards[0]: size is missing or not a whole number");
        Path notJson = Files.writeString(dir.resolve("x.json"), "{oops");
        assertThatThrownBy(() -> ManifestJson.read(notJson)).hasMessageStartingWith(notJson + ": not valid JSON");
        assertThatThrownBy(() -> ManifestJson.read(dir.resolve("missing.json"))).hasMessageEndingWith("no such file");
    }

    @Test
    void badLocation_isOneSentence() throws Exception {
        Path log = dir.resolve("bad.log");
        Process p = Servers.ferry(log, "index", "data/train", "-o", dir.resolve("m.json").toString());
        assertThat(p.waitFor(1, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).isEqualTo(2);
        assertThat(Files.readString(log).strip()).isEqualTo("ferry: the dataset location must look like s3://BUCKET/PREFIX, not 'data/train'.");
    }
}
