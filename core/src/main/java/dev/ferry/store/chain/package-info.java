/**
 * The decorator chain in front of an origin, {@link dev.ferry.store.chain.StoreChain} =
 * ParallelRead(Retrying(Governed(Metered(origin)))): parallel ranged reads, bounded retries with backoff,
 * the per-prefix governor, the meter, and the daemon's first-byte timeout. Each is an
 * {@link dev.ferry.store.ObjectStore} that wraps another. Depends on {@code store} (the interface, values and
 * errors), slf4j, HdrHistogram and the JDK; nothing in {@code store} depends on it.
 */
package dev.ferry.store.chain;
