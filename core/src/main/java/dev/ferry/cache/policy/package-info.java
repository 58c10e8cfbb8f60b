/**
 * Eviction policies: pure data structures fed access events, with no I/O, no threads and no clock, so the
 * local tier and the simulator run the very same classes (as Caffeine's simulator does). LRU is the
 * baseline, pin (fill, then keep) is what CoorDL showed beats LRU on shuffled epochs, SIEVE is a modern
 * general-purpose baseline, and MIN evicts by the known future (Belady).
 *
 * <p>Depends on the JDK only.
 */
package dev.ferry.cache.policy;
