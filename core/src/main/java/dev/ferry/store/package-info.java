/**
 * Object stores: the {@link dev.ferry.store.ObjectStore} interface every tier implements, its value types and
 * error classification, the optional abilities ({@link dev.ferry.store.BucketOperations},
 * {@link dev.ferry.store.PendingUploads}, and of a read's stream,
 * {@link dev.ferry.store.FileRegionReadable}), {@link dev.ferry.store.ForwardingObjectStore} for decorators and the
 * multipart helpers ({@link dev.ferry.store.Uploads}). The folder store lives in {@code store.file}, the decorator
 * chain (retry, governor, meter, parallel reads) in {@code store.chain}, the tiers between the local tier and the
 * origin in {@code store.tier}; all three depend on this package, never the other way.
 *
 * <p>S3's additional checksums ({@link dev.ferry.store.Checksum}) are values here too, kept with an object as attributes.
 *
 * <p>Depends on nothing but the JDK: no SDK, no Netty, no CLI.
 */
package dev.ferry.store;
