package dev.ferry.it;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.writeback.WriteBackConfig;
import dev.ferry.writeback.WriteBackStore;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;

/** The child of {@link WriteBackKillTest}: writes checkpoints through write-back until killed; prints each ack. */
public final class WriteBackChildMain {
    private WriteBackChildMain() {
    }

    static final int KEYS = 5;

    /** The bytes of a version: 8 bytes of version, 4 of key index, then seeded random bytes; every 7th is large. */
    static byte[] content(int keyIndex, long version) {
        int size = version % 7 == 3 ? 12 << 20 : 10_000 + (int) (version * 7919 % 300_000);
        byte[] b = new byte[size];
        new Random(version * 31 + keyIndex).nextBytes(b);
        ByteBuffer.wrap(b).putLong(0, version).putInt(8, keyIndex);
        return b;
    }

    public static void main(String[] args) throws Exception {
        FileObjectStore origin = new FileObjectStore(Path.of(args[0]));
        long firstVersion = Long.parseLong(args[2]);
        try (WriteBackStore wb = new WriteBackStore(origin, WriteBackConfig.of(Path.of(args[1]), 1L << 30).withUploaders(3)
                .withPartSize(5L << 20).withMaxBackoff(Duration.ofMillis(200)))) {
            System.out.println("ready");
            System.out.flush();
            for (long version = firstVersion; ; version++) {
                int key = (int) (version % KEYS);
                wb.write(ObjectKey.of("ckpt", "k" + key), PutBody.ofBytes(content(key, version)));
                System.out.println("acked " + key + " " + version);
                System.out.flush();
            }
        }
    }
}
