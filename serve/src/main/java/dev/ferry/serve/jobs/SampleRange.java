package dev.ferry.serve.jobs;

import dev.ferry.store.ObjectKey;

/** One sample to read: an object's byte range, pinned to a version when the ETag is known. */
record SampleRange(int index, ObjectKey key, long offset, long length, String etag) {
}
