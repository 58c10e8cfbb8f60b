/**
 * The local tier: {@link dev.ferry.cache.CachingStore}, a crash-safe, capacity-bounded block cache on a local
 * directory (node-local NVMe) in front of any {@link dev.ferry.store.ObjectStore}, itself an ObjectStore so
 * tiers compose. Eviction is delegated to the pure policies in {@code cache.policy}.
 *
 * <p>Depends on {@code store}, {@code cache.policy} and the JDK.
 */
package dev.ferry.cache;
