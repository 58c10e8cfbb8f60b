/**
 * The S3 wire protocol, without semantics: signatures ({@code SigV4}), aws-chunked bodies ({@code AwsChunked}),
 * request bodies ({@code RequestBody}, checked against the digests declared), replies ({@code Reply}), errors
 * ({@code S3Error}), XML ({@code Xml}), URIs, keys, ranges, continuation tokens, virtual hosts, object headers and
 * ferry's own headers between daemons ({@code FerryHeaders}).
 * Depends on core (values, and the local tier's resident reads that a reply sends with sendfile) and Netty's
 * HTTP types; on nothing else in {@code serve}.
 */
package dev.ferry.serve.protocol;
