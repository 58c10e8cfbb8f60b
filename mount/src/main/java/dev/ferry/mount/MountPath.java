package dev.ferry.mount;

import dev.ferry.store.ObjectKey;

/** A path in the mount: the root, a bucket (key null), or a key (a file or a prefix) in a bucket. */
record MountPath(String bucket, String key) {
    /** The location of {@code path}; null for a name no bucket or key can have (it does not exist). */
    static MountPath parse(String path) {
        if (path == null || path.equals("/") || path.isEmpty()) {
            return new MountPath(null, null);
        }
        String p = path.startsWith("/") ? path.substring(1) : path;
        int slash = p.indexOf('/');
        String bucket = slash < 0 ? p : p.substring(0, slash);
        String key = slash < 0 || slash == p.length() - 1 ? null : p.substring(slash + 1);
        try {
            ObjectKey.validateBucket(bucket);
            if (key != null) {
                ObjectKey.of(bucket, key);
            }
        } catch (IllegalArgumentException invalid) {
            return null;
        }
        return new MountPath(bucket, key);
    }

    boolean isRoot() {
        return bucket == null;
    }

    ObjectKey object() {
        return ObjectKey.of(bucket, key);
    }

    /** The key as a prefix of what is under it ("" for a bucket). */
    String prefix() {
        return key == null ? "" : key + "/";
    }
}
