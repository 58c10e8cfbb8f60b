package dev.ferry.store;

/**
 * One page of a listing: keys in {@code bucket} starting with {@code prefix} (may be empty), rolled up at
 * {@code delimiter} into common prefixes when it is set, starting after {@code continuationToken} when it is
 * set, else after the key {@code startAfter} when that is set (S3's {@code start-after}: a listing can begin
 * anywhere in key order, which is how one tree is listed as several ranges at once), at most {@code maxKeys}
 * entries (objects plus common prefixes).
 */
public record ListRequest(String bucket, String prefix, String delimiter, String continuationToken, int maxKeys, String startAfter) {
    public static final int DEFAULT_MAX_KEYS = 1000;

    /** A request from the start of the listing, or from {@code continuationToken}. */
    public ListRequest(String bucket, String prefix, String delimiter, String continuationToken, int maxKeys) {
        this(bucket, prefix, delimiter, continuationToken, maxKeys, null);
    }

    public ListRequest {
        startAfter = startAfter == null || startAfter.isEmpty() ? null : startAfter;
        ObjectKey.validateBucket(bucket);
        prefix = prefix == null ? "" : prefix;
        delimiter = delimiter == null || delimiter.isEmpty() ? null : delimiter;
        continuationToken = continuationToken == null || continuationToken.isEmpty() ? null : continuationToken;
        if (maxKeys < 1 || maxKeys > DEFAULT_MAX_KEYS) {
            throw new IllegalArgumentException("maxKeys must be 1 to " + DEFAULT_MAX_KEYS + ": " + maxKeys);
        }
    }

    public static ListRequest of(String bucket, String prefix) {
        return new ListRequest(bucket, prefix, null, null, DEFAULT_MAX_KEYS);
    }

    public ListRequest withDelimiter(String newDelimiter) {
        return new ListRequest(bucket, prefix, newDelimiter, continuationToken, maxKeys, startAfter);
    }

    public ListRequest withMaxKeys(int newMaxKeys) {
        return new ListRequest(bucket, prefix, delimiter, continuationToken, newMaxKeys, startAfter);
    }

    public ListRequest withContinuationToken(String token) {
        return new ListRequest(bucket, prefix, delimiter, token, maxKeys, startAfter);
    }

    public ListRequest withStartAfter(String key) {
        return new ListRequest(bucket, prefix, delimiter, continuationToken, maxKeys, key);
    }
}
