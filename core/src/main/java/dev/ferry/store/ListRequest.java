package dev.ferry.store;

/**
 * One page of a listing: keys in {@code bucket} starting with {@code prefix} (may be empty), rolled up at
 * {@code delimiter} into common prefixes when it is set, starting after {@code continuationToken} when it is
 * set, at most {@code maxKeys} entries (objects plus common prefixes).
 */
public record ListRequest(String bucket, String prefix, String delimiter, String continuationToken, int maxKeys) {
    public static final int DEFAULT_MAX_KEYS = 1000;

    public ListRequest {
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
        return new ListRequest(bucket, prefix, newDelimiter, continuationToken, maxKeys);
    }

    public ListRequest withMaxKeys(int newMaxKeys) {
        return new ListRequest(bucket, prefix, delimiter, continuationToken, newMaxKeys);
    }

    public ListRequest withContinuationToken(String token) {
        return new ListRequest(bucket, prefix, delimiter, token, maxKeys);
    }
}
