package dev.ferry.loader;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ObjectKey;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.Test;

/** The in-place ustar parser agrees with commons-compress, and hands anything else to it. */
class TarShardsTest {
    static final ObjectKey SHARD = ObjectKey.of("data", "s.tar");

    @Test
    void ustarInPlace_agreesWithCommonsCompress() throws Exception {
        Random random = new Random(4);
        Map<String, Map<String, byte[]>> samples = new LinkedHashMap<>();
        for (int i = 0; i < 50; i++) {
            Map<String, byte[]> fields = new LinkedHashMap<>();
            byte[] jpg = new byte[random.nextInt(3000)];
            random.nextBytes(jpg);
            fields.put("jpg", jpg);
            fields.put("json", ("{\"i\":" + i + "}").getBytes());
            samples.put("dir/sample" + i, fields);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<Long> offsets = TarShards.write(out, samples);
        byte[] tar = out.toByteArray();
        for (int i = 0; i < 50; i++) {
            byte[] span = Arrays.copyOfRange(tar, offsets.get(i).intValue(), offsets.get(i + 1).intValue());
            List<Sample> fast = TarShards.parseUstar(SHARD, span);
            List<Sample> slow = TarShards.parseAnyTar(SHARD, span);
            assertThat(fast).isNotNull().hasSize(1);
            assertThat(fast.get(0).key()).isEqualTo(slow.get(0).key()).isEqualTo("dir/sample" + i);
            assertThat(fast.get(0).fields().keySet()).isEqualTo(slow.get(0).fields().keySet());
            for (String f : fast.get(0).fields().keySet()) {
                assertThat(fast.get(0).fields().get(f)).isEqualTo(slow.get(0).fields().get(f));
            }
        }
        assertThat(TarShards.parse(SHARD, tar)).hasSize(50);
    }

    @Test
    void paxLongNames_goToCommonsCompress() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (TarArchiveOutputStream tar = new TarArchiveOutputStream(out)) {
            tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            String name = "a/" + "x".repeat(150) + ".txt";
            TarArchiveEntry e = new TarArchiveEntry(name);
            e.setSize(3);
            tar.putArchiveEntry(e);
            tar.write(new byte[] {1, 2, 3});
            tar.closeArchiveEntry();
        }
        byte[] bytes = out.toByteArray();
        assertThat(TarShards.parseUstar(SHARD, bytes)).isNull();
        List<Sample> parsed = TarShards.parse(SHARD, bytes);
        assertThat(parsed).singleElement().satisfies(s -> {
            assertThat(s.key()).isEqualTo("a/" + "x".repeat(150));
            assertThat(s.fields().get("txt")).containsExactly(1, 2, 3);
        });
    }
}
