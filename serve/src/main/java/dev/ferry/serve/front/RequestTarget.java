package dev.ferry.serve.front;

import dev.ferry.serve.protocol.Keys;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Uris;
import java.util.List;
import java.util.Map;

/**
 * Where a request goes: ferry's own API ({@code /_ferry}, {@code /_ferry/...}), or an S3 bucket and key (path style,
 * or virtual-hosted: the Host named the bucket), read from the request target with its query. Immutable.
 *
 * @param rawPath  the path as sent (what a signature covers)
 * @param rawQuery the query as sent, or null
 * @param query    the query decoded; for S3, each parameter at most once
 * @param bucket   the bucket, decoded and checked (null: the API, or the service: ListBuckets)
 * @param key      the key, decoded and checked (null: none)
 */
record RequestTarget(boolean api, String rawPath, String rawQuery, Map<String, List<String>> query, String bucket, String key) {
    /**
     * Splits a request target into ferry's API or an S3 bucket and key, decoded and checked. With
     * {@code hostBucket} (virtual-hosted style: the Host named the bucket) the whole path is the key.
     */
    static RequestTarget parse(String uri, String hostBucket) throws S3Error {
        String target = uri;
        if (target.startsWith("http://") || target.startsWith("https://")) {
            int slash = target.indexOf('/', target.indexOf("//") + 2);
            target = slash < 0 ? "/" : target.substring(slash);
        }
        if (!target.startsWith("/")) {
            throw S3Error.invalidArgument("the request target must start with '/': " + Uris.abbreviate(uri));
        }
        int q = target.indexOf('?');
        String rawPath = q < 0 ? target : target.substring(0, q);
        String rawQuery = q < 0 ? null : target.substring(q + 1);
        Map<String, List<String>> query = Uris.query(rawQuery);
        boolean api = hostBucket == null && (rawPath.equals("/_ferry") || rawPath.startsWith("/_ferry/"));
        if (!api) {
            // S3 takes each parameter once: with two, which one is meant (?versionId=null&versionId=abc)?
            for (Map.Entry<String, List<String>> p : query.entrySet()) {
                if (p.getValue().size() > 1) {
                    throw S3Error.invalidArgument("the query gives " + Uris.abbreviate(p.getKey()) + " " + p.getValue().size()
                            + " times; each parameter may be given once");
                }
            }
        }
        if (hostBucket != null) {
            String key = rawPath.length() <= 1 ? null : Keys.check(Uris.decode(rawPath.substring(1)));
            return new RequestTarget(false, rawPath, rawQuery, query, hostBucket, key);
        }
        if (api) {
            return new RequestTarget(true, rawPath, rawQuery, query, null, null);
        }
        String path = rawPath.substring(1);
        if (path.isEmpty()) {
            return new RequestTarget(false, rawPath, rawQuery, query, null, null);
        }
        int slash = path.indexOf('/');
        String bucket = Keys.bucket(Uris.decode(slash < 0 ? path : path.substring(0, slash)));
        String key = slash < 0 || slash == path.length() - 1 ? null : Keys.check(Uris.decode(path.substring(slash + 1)));
        return new RequestTarget(false, rawPath, rawQuery, query, bucket, key);
    }
}
