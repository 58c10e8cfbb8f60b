package dev.ferry.loader;

import dev.ferry.plan.Manifest;
import dev.ferry.plan.Shard;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Writes a WebDataset-style dataset of random "images" to a store and returns its manifest: shards named
 * {@code PREFIX/shard-NNNNN.tar}, samples {@code NNNNNN.jpg} (random bytes, image-sized, the first four
 * bytes the sample's global id) and {@code NNNNNN.cls} (a label). For demos, tests and benchmarks.
 */
public final class SyntheticDataset {
    private SyntheticDataset() {
    }

    /** Samples are {@code sampleBytes} to twice that; shard {@code s} holds {@code samplesPerShard + s % 3} of them. */
    public static Manifest write(ObjectStore store, String bucket, String prefix, int shards, int samplesPerShard, int sampleBytes,
            long seed) throws IOException {
        if (shards < 1 || samplesPerShard < 1 || sampleBytes < 4) {
            throw new IllegalArgumentException("need shards >= 1, samplesPerShard >= 1, sampleBytes >= 4");
        }
        Random random = new Random(seed);
        List<Shard> list = new ArrayList<>();
        int id = 0;
        for (int s = 0; s < shards; s++) {
            Map<String, Map<String, byte[]>> samples = new LinkedHashMap<>();
            int count = samplesPerShard + (s % 3);
            for (int i = 0; i < count; i++) {
                byte[] body = new byte[sampleBytes + random.nextInt(sampleBytes)];
                random.nextBytes(body);
                ByteBuffer.wrap(body).putInt(0, id);
                Map<String, byte[]> fields = new LinkedHashMap<>();
                fields.put("jpg", body);
                fields.put("cls", Integer.toString(id % 1000).getBytes(StandardCharsets.UTF_8));
                samples.put(String.format("%06d", id), fields);
                id++;
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            List<Long> offsets = TarShards.write(out, samples);
            ObjectKey key = ObjectKey.of(bucket, String.format("%s/shard-%05d.tar", prefix, s));
            ObjectMeta meta = store.put(key, PutBody.ofBytes(out.toByteArray()));
            list.add(new Shard(key, meta.size(), meta.etag(), count, offsets));
        }
        return new Manifest(list);
    }

    /** The global id a synthetic sample carries. */
    public static int idOf(Sample sample) {
        return ByteBuffer.wrap(sample.fields().get("jpg")).getInt(0);
    }
}
