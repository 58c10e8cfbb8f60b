/**
 * The S3 adapter: {@link dev.ferry.s3client.S3ObjectStore}, an {@link dev.ferry.store.ObjectStore} over the AWS SDK
 * for Java v2 (sync client, Apache HTTP), for AWS S3 and S3-compatible stores (MinIO, Ceph RGW, GCS and R2
 * interop, the embedded store, moto), and {@link dev.ferry.s3client.S3Credentials}, which decides what every ferry S3
 * client signs with. Depends on ferry-core and the SDK; serve, mount and the CLI use it.
 */
package dev.ferry.s3client;
