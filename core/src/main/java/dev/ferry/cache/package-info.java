/**
 * The local tier: {@link dev.ferry.cache.CachingStore}, a crash-safe, capacity-bounded block cache on a local
 * directory (node-local NVMe) in front of any {@link dev.ferry.store.ObjectStore}, itself an ObjectStore so
 * tiers compose. Eviction is delegated to the pure policies in {@code cache.policy}. {@code CachingStore} composes
 * the parts: {@code CacheRecovery} (snapshot and crash scan), {@code BlockIndex} (entries, pins, reservations,
 * eviction), {@code BlockRuns} (single flight, runs, prefetch) and {@code BlockStream} (a reader's range).
 *
 * <p>Depends on {@code store}, {@code cache.policy} and the JDK.
 */
package dev.ferry.cache;
