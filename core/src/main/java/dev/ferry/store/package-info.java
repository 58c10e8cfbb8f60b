/**
 * Object stores: the {@link dev.ferry.store.ObjectStore} interface every tier implements, its value types and
 * error classification, {@link dev.ferry.store.ForwardingObjectStore} for decorators, multipart helpers, and the
 * folder store ({@link dev.ferry.store.FileObjectStore}). The decorator chain (retry, governor, meter, parallel
 * reads) lives in {@code store.chain}, the tiers between the local tier and the origin in {@code store.tier};
 * both depend on this package, never the other way.
 *
 * <p>Depends on nothing but the JDK: no SDK, no Netty, no CLI.
 */
package dev.ferry.store;
