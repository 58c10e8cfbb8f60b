package dev.ferry.cache;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the local tier ({@link CachingStore}). Keys and defaults:
 * <ul>
 *   <li>{@code dir}: the cache directory (node-local NVMe); created if missing.
 *   <li>{@code capacity}: hard limit on cached bytes (block data).
 *   <li>{@code blockSize} (default 4 MiB): objects are cached in aligned blocks of this size; an object
 *       smaller than a block is one block of its own size.
 *   <li>{@code highWatermark} (0.95) and {@code lowWatermark} (0.90): when admitting a block would take the
 *       cache over {@code high * capacity}, blocks are evicted down to {@code low * capacity}.
 *   <li>{@code verify} (ON_LOAD): when a block's CRC32C is checked before its bytes leave: ON_LOAD unless they
 *       are provably the bytes last checked (see {@link VerifyMode}); ALWAYS; the opt-outs FIRST_READ, NEVER.
 *   <li>{@code metadataTtl} (60 s): how long an object's size and ETag are trusted before the upstream is
 *       asked again (HEAD). A read that names the version it wants (If-Match, as plans do) needs no HEAD when
 *       the cache knows that version. Zero: ask every time.
 *   <li>{@code maxRunBlocks} (16): adjacent missing blocks fetched in one upstream ranged GET, at most.
 *   <li>{@code policy} ("lru"): eviction policy by name: lru, pin, sieve. MIN needs the plan's future, so it is
 *       not named here: give the {@link CachingStore} constructor that takes a policy a {@code MinPolicy} over
 *       the plan's blocks.
 * </ul>
 */
public record CacheConfig(
        Path dir,
        long capacity,
        int blockSize,
        double highWatermark,
        double lowWatermark,
        VerifyMode verify,
        Duration metadataTtl,
        int maxRunBlocks,
        String policy) {

    public static final int DEFAULT_BLOCK_SIZE = 4 << 20;

    public CacheConfig {
        Objects.requireNonNull(dir, "dir is null");
        Objects.requireNonNull(verify, "verify is null");
        Objects.requireNonNull(metadataTtl, "metadataTtl is null");
        Objects.requireNonNull(policy, "policy is null");
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity is negative: " + capacity);
        }
        if (blockSize < 4096) {
            throw new IllegalArgumentException("blockSize must be at least 4 KiB: " + blockSize);
        }
        if (!(lowWatermark > 0 && lowWatermark <= highWatermark && highWatermark <= 1)) {
            throw new IllegalArgumentException("need 0 < lowWatermark <= highWatermark <= 1: " + lowWatermark + ", " + highWatermark);
        }
        if (metadataTtl.isNegative()) {
            throw new IllegalArgumentException("metadataTtl is negative: " + metadataTtl);
        }
        if (maxRunBlocks < 1) {
            throw new IllegalArgumentException("maxRunBlocks must be positive: " + maxRunBlocks);
        }
    }

    public static CacheConfig of(Path dir, long capacity) {
        return new CacheConfig(dir, capacity, DEFAULT_BLOCK_SIZE, 0.95, 0.90, VerifyMode.ON_LOAD,
                Duration.ofSeconds(60), 16, "lru");
    }

    public CacheConfig withBlockSize(int size) {
        return new CacheConfig(dir, capacity, size, highWatermark, lowWatermark, verify, metadataTtl, maxRunBlocks, policy);
    }

    public CacheConfig withVerify(VerifyMode mode) {
        return new CacheConfig(dir, capacity, blockSize, highWatermark, lowWatermark, mode, metadataTtl, maxRunBlocks, policy);
    }

    public CacheConfig withMetadataTtl(Duration ttl) {
        return new CacheConfig(dir, capacity, blockSize, highWatermark, lowWatermark, verify, ttl, maxRunBlocks, policy);
    }

    public CacheConfig withPolicy(String name) {
        return new CacheConfig(dir, capacity, blockSize, highWatermark, lowWatermark, verify, metadataTtl, maxRunBlocks, name);
    }

    public CacheConfig withWatermarks(double high, double low) {
        return new CacheConfig(dir, capacity, blockSize, high, low, verify, metadataTtl, maxRunBlocks, policy);
    }

    public CacheConfig withMaxRunBlocks(int blocks) {
        return new CacheConfig(dir, capacity, blockSize, highWatermark, lowWatermark, verify, metadataTtl, blocks, policy);
    }
}
