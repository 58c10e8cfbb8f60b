/**
 * What S3 requests mean over a node's stores: {@code S3Service} (objects, buckets, multipart, the node-local
 * scratch bucket, write-back), {@code CopyOperations}, {@code Listing}, {@code MultipartListing},
 * {@code Preconditions} with {@code KeyLocks}, {@code WriteChecks} and {@code ResponseOverrides}. Depends on
 * {@code serve.node} (the stores) and {@code serve.protocol} (parsing and replies); knows nothing of channels.
 */
package dev.ferry.serve.s3;
