package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.cache.CachingStore;
import dev.ferry.serve.DaemonFixture;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumMode;

/**
 * A read through the daemon asks the node's door once for what the local tier knows of the object: a warm GET (whole,
 * ranged, asking for the checksum) and a HEAD look the tier's metadata up once each, counted by the tier itself ({@link dev.ferry.cache.CacheStats#metadataLookups}), with the AWS SDK as client.
 */
class OneDoorTest {
    private static long lookups(DaemonFixture ferry) {
        CachingStore cache = ferry.daemon.node().stack().cache();
        return cache.stats().metadataLookups();
    }

    @Test
    void aWarmGet_orHead_looksTheTiersMetadataUpOnce(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("prefetch-bytes", "0").start(); S3Client s3 = ferry.sdk("a", "b")) {
            byte[] data = new byte[3 << 20];
            new Random(46).nextBytes(data);
            ferry.daemon.node().stack().belowCache().put(ObjectKey.of("data", "warm.bin"), PutBody.ofBytes(data));
            for (int i = 0; i < 3; i++) { // fetched, then checked once where a check may block, then trusted
                assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("warm.bin")).asByteArray()).isEqualTo(data);
            }

            long before = lookups(ferry);
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("warm.bin")).asByteArray()).isEqualTo(data);
            assertThat(lookups(ferry) - before).as("a whole GET").isEqualTo(1);

            before = lookups(ferry);
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("warm.bin").range("bytes=1000-1999999")).asByteArray())
                    .isEqualTo(Arrays.copyOfRange(data, 1000, 2_000_000));
            assertThat(lookups(ferry) - before).as("a ranged GET across two blocks").isEqualTo(1);

            before = lookups(ferry);
            assertThat(s3.getObjectAsBytes(b -> b.bucket("data").key("warm.bin").checksumMode(ChecksumMode.ENABLED)).asByteArray())
                    .isEqualTo(data);
            assertThat(lookups(ferry) - before).as("a GET asking for the checksum").isEqualTo(1);

            before = lookups(ferry);
            assertThat(s3.headObject(b -> b.bucket("data").key("warm.bin")).contentLength()).isEqualTo(data.length);
            assertThat(lookups(ferry) - before).as("a HEAD").isEqualTo(1);
        }
    }
}
