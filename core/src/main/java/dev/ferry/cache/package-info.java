/**
 * The local tier: {@link dev.ferry.cache.CachingStore}, a crash-safe, capacity-bounded block cache on a local
 * directory (node-local NVMe) in front of any {@link dev.ferry.store.ObjectStore}, itself an ObjectStore so
 * tiers compose. Eviction is delegated to the pure policies in {@code cache.policy}.
 *
 * <p>{@code CachingStore} is the wrapper: requests, and what it knows of each object ({@code MetadataCache}). Its
 * engine, {@code BlockCache}, keeps the blocks and composes the parts: {@code CacheLayout} (the folder),
 * {@code CacheRecovery} (snapshot and crash scan), {@code BlockIndex} (entries, pins, reservations, eviction),
 * {@code BlockFetcher} (single flight, runs, prefetch), {@code ResidentBlocks} (resident blocks leaving the disk,
 * checked), {@code BypassReads} (refused blocks) and {@code BlockStream} (a reader's range). The engine and its parts
 * never refer to the wrapper.
 *
 * <p>Depends on {@code store}, {@code cache.policy}, {@code time} and the JDK.
 */
package dev.ferry.cache;
