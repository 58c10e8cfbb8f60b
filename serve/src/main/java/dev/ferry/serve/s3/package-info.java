/**
 * What S3 requests mean over a node's stores: {@code S3Service} routes a request to {@code ObjectReads},
 * {@code ObjectWrites}, {@code MultipartUploads}, {@code Buckets} or {@code Listing}, which reach the node's stores
 * through {@code Stores} (the scratch bucket's local disk, write-back, the local tier and what is under it); with
 * {@code CopyOperations}, {@code MultipartListing}, {@code Preconditions} with {@code KeyLocks}, {@code WriteChecks},
 * {@code ResponseOverrides}, {@code ObjectAttributesReply} and {@code Acls}. Depends on {@code serve.node} (the
 * stores) and {@code serve.protocol} (parsing and replies); knows nothing of channels.
 */
package dev.ferry.serve.s3;
