package dev.ferry.store;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The bytes of a write, and the attributes the object keeps with them. A body can be opened more than
 * once, so a failed upload can be retried.
 */
public interface PutBody {
    /** Exact number of bytes {@link #open()} yields. */
    long length();

    /** A fresh stream over the whole body. */
    InputStream open() throws IOException;

    /** The file behind this body, when there is one (lets adapters upload without copying). */
    default Path file() {
        return null;
    }

    /** What the object keeps besides its bytes (content type, user metadata); none by default. */
    default ObjectAttributes attributes() {
        return ObjectAttributes.NONE;
    }

    /**
     * The ETag a single PUT of these bytes gets (their MD5 in hex) when the writer has it already, else null:
     * what checks the store's answer without reading the bytes again.
     */
    default String etag() {
        return null;
    }

    /** This body with {@code attributes}. */
    default PutBody withAttributes(ObjectAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes is null");
        return with(this, attributes, etag());
    }

    /** This body, whose bytes have the MD5 ETag {@code md5} (null: not known). */
    default PutBody withEtag(String md5) {
        return with(this, attributes(), md5);
    }

    private static PutBody with(PutBody bytes, ObjectAttributes attributes, String etag) {
        return new PutBody() {
            @Override
            public long length() {
                return bytes.length();
            }

            @Override
            public InputStream open() throws IOException {
                return bytes.open();
            }

            @Override
            public Path file() {
                return bytes.file();
            }

            @Override
            public ObjectAttributes attributes() {
                return attributes;
            }

            @Override
            public String etag() {
                return etag;
            }
        };
    }

    static PutBody ofBytes(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes is null");
        return new PutBody() {
            @Override
            public long length() {
                return bytes.length;
            }

            @Override
            public InputStream open() {
                return new ByteArrayInputStream(bytes);
            }
        };
    }

    static PutBody ofFile(Path path) throws IOException {
        Objects.requireNonNull(path, "path is null");
        long size = Files.size(path);
        return new PutBody() {
            @Override
            public long length() {
                return size;
            }

            @Override
            public InputStream open() throws IOException {
                return Files.newInputStream(path);
            }

            @Override
            public Path file() {
                return path;
            }
        };
    }
}
