package dev.ferry.store;

/** The unit object stores throttle by: a bucket and the first few '/'-separated segments of a key. */
public final class Prefixes {
    private Prefixes() {
    }

    /**
     * {@code bucket/} followed by the first {@code depth} segments of {@code key}, each with its '/'; fewer
     * when the key has fewer folders. Depth 1: {@code train/shard-001.tar} is under {@code bucket/train/}.
     */
    public static String of(String bucket, String key, int depth) {
        int end = 0;
        for (int i = 0; i < depth; i++) {
            int slash = key.indexOf('/', end);
            if (slash < 0) {
                break;
            }
            end = slash + 1;
        }
        return bucket + "/" + key.substring(0, end);
    }
}
