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

    /**
     * The body's file when it is the writer's to give away (a request body spooled to disk, deleted once the request
     * ends), with the digests of its bytes taken as they arrived: a journal on the same disk may move the file into
     * place instead of copying and hashing it again. Null by default: the bytes are read.
     */
    default Spool spool() {
        return null;
    }

    /**
     * A file that holds exactly a body's bytes and that its owner gives away, with their CRC32C and MD5 (hex; null when
     * not taken). Whoever moves it takes it over (syncing it to disk is theirs to do); whoever does not leaves it alone.
     */
    record Spool(Path file, int crc32c, String md5) {
        public Spool {
            Objects.requireNonNull(file, "file is null");
        }
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
        return with(this, attributes, etag(), spool());
    }

    /** This body, whose bytes have the MD5 ETag {@code md5} (null: not known). */
    default PutBody withEtag(String md5) {
        return with(this, attributes(), md5, spool());
    }

    /** {@code bytes} with {@code attributes}, ETag {@code etag} and spool {@code spool} (each null: none). */
    private static PutBody with(PutBody bytes, ObjectAttributes attributes, String etag, Spool spool) {
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

            @Override
            public Spool spool() {
                return spool;
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

    /** A spooled body: the file, whose bytes have the digests {@code spool} names, given away to whoever moves it. */
    static PutBody ofSpool(Spool spool) throws IOException {
        Objects.requireNonNull(spool, "spool is null");
        return with(ofFile(spool.file()), ObjectAttributes.NONE, spool.md5(), spool);
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
