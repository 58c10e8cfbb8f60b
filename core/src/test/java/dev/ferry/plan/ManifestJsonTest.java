package dev.ferry.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.store.ObjectKey;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Numbers in manifests (and the counts plans derive from them) are taken whole and in range, or refused: never cut to fit. */
class ManifestJsonTest {
    static Manifest read(String size, String samples) throws Exception {
        String json = "{\"format\":\"ferry-manifest/1\",\"shards\":[{\"bucket\":\"data\",\"key\":\"k\",\"size\":" + size + ",\"etag\":\"e\",\"samples\":"
                + samples + "}]}";
        return ManifestJson.read(json.getBytes(StandardCharsets.UTF_8), "m.json");
    }

    @Test
    void samplesPastAnInt_areRefusedNamingTheFieldAndTheRange() {
        assertThatThrownBy(() -> read("10", "2147483648")).isInstanceOf(ManifestJson.BadManifestException.class)
                .hasMessage("m.json: shards[0]: samples must be 1 to 2147483647: 2147483648");
        assertThatThrownBy(() -> read("10", "4294967297")).hasMessage("m.json: shards[0]: samples must be 1 to 2147483647: 4294967297");
        assertThatThrownBy(() -> read("10", "0")).hasMessage("m.json: shards[0]: samples must be 1 to 2147483647: 0");
    }

    @Test
    void fractionsHugeExponentsAndSizesPastALong_areRefused_wholeDecimalsTaken() throws Exception {
        assertThatThrownBy(() -> read("10", "1.5")).hasMessage("m.json: shards[0]: samples must be a whole number from 1 to 2147483647, not 1.5");
        assertThatThrownBy(() -> read("10", "1e999999999")).hasMessageStartingWith("m.json: shards[0]: samples must be 1 to 2147483647: ");
        assertThatThrownBy(() -> read("18446744073709551616", "1"))
                .hasMessage("m.json: shards[0]: size must be 0 to 9223372036854775807: 18446744073709551616");
        assertThatThrownBy(() -> read("\"10\"", "1")).hasMessage("m.json: shards[0]: size must be a whole number from 0 to 9223372036854775807, not \"10\"");
        assertThat(read("4.0", "2.0e0").shards().get(0)).isEqualTo(new Shard(ObjectKey.of("data", "k"), 4, "e", 2));
        assertThat(read("9223372036854775807", "1").shards().get(0).size()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void sampleOffsets_ofAShardNear2To63Bytes_doNotOverflow() {
        Shard s = new Shard(ObjectKey.of("data", "k"), Long.MAX_VALUE, "e", 7);
        for (int i = 0; i <= 7; i++) {
            long exact = BigInteger.valueOf(Long.MAX_VALUE).multiply(BigInteger.valueOf(i)).divide(BigInteger.valueOf(7)).longValueExact();
            assertThat(s.sampleOffset(i)).isEqualTo(exact);
        }
    }

    @Test
    void aWorldOfMoreRanksThanAnIntHolds_isRefused() {
        assertThat(new World(100_000, 4096, 1024).ranks()).isEqualTo(409_600_000);
        assertThatThrownBy(() -> new World(1 << 20, 1 << 12, 1))
                .hasMessage("a world may have at most 2147483647 ranks: 1048576 nodes x 4096 ranks per node");
    }
}
