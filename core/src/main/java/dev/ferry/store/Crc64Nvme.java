package dev.ferry.store;

import java.util.zip.Checksum;

/**
 * CRC-64/NVME, the checksum S3 names {@code x-amz-checksum-crc64nvme} (and the AWS SDKs' default for
 * full-object checksums): reflected, polynomial 0xAD93D23594C93659 (0x9A6C9329AC4BC9B5 reflected), initial
 * value and final xor all ones; the check value of "123456789" is 0xAE8B14860A799888. Table-driven, a byte
 * at a time. Not thread-safe (one body).
 */
public final class Crc64Nvme implements Checksum {
    private static final long[] TABLE = new long[256];

    static {
        for (int i = 0; i < 256; i++) {
            long c = i;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0x9A6C9329AC4BC9B5L : c >>> 1;
            }
            TABLE[i] = c;
        }
    }

    private long crc = -1L;

    @Override
    public void update(int b) {
        crc = TABLE[(int) ((crc ^ b) & 0xFF)] ^ (crc >>> 8);
    }

    @Override
    public void update(byte[] b, int off, int len) {
        long c = crc;
        for (int i = off; i < off + len; i++) {
            c = TABLE[(int) ((c ^ b[i]) & 0xFF)] ^ (c >>> 8);
        }
        crc = c;
    }

    @Override
    public long getValue() {
        return ~crc;
    }

    @Override
    public void reset() {
        crc = -1L;
    }
}
