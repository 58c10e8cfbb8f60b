package dev.ferry.store;

/** The object (or its bucket) does not exist. */
public final class ObjectNotFoundException extends StoreException {
    private static final long serialVersionUID = 1L;

    public ObjectNotFoundException(String message) {
        super(Kind.NOT_FOUND, 404, message, null);
    }

    public ObjectNotFoundException(String message, Throwable cause) {
        super(Kind.NOT_FOUND, 404, message, cause);
    }

    /** A 404 the store named ({@code NoSuchKey}, {@code NoSuchBucket}, {@code NoSuchUpload}). */
    public ObjectNotFoundException(String message, String errorCode, Throwable cause) {
        super(Kind.NOT_FOUND, 404, errorCode, message, cause);
    }

    public static ObjectNotFoundException of(ObjectKey key) {
        return new ObjectNotFoundException("no such object: " + key);
    }
}
