/**
 * The chain of object stores: the {@link dev.ferry.store.ObjectStore} interface every tier implements,
 * its value types and error classification, the file-system store, and the decorators (retry, per-prefix
 * governor, meter, tracking) that wrap any store and are themselves stores. The tiers that sit between the
 * local tier and the origin (regional group, shared file system) live in {@code store.tier}.
 *
 * <p>Depends on nothing but the JDK, slf4j and HdrHistogram: no SDK, no Netty, no CLI.
 */
package dev.ferry.store;
