package dev.ferry.plan;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.store.ObjectKey;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Manifests on disk, as JSON:
 * <pre>
 * {"format":"ferry-manifest/1","source":"s3://bucket/prefix","shards":[
 *   {"bucket":"b","key":"train/shard-00000.tar","size":123,"etag":"...","samples":3,"sample_offsets":[0,1536,3072,4608]}]}
 * </pre>
 * {@code sample_offsets} may be absent (samples of equal size). A manifest that does not read says where:
 * {@code manifest.json: shards[3]: size is missing}.
 */
public final class ManifestJson {
    public static final String FORMAT = "ferry-manifest/1";
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private ManifestJson() {
    }

    /** A manifest that was read but is not a valid one (bad JSON, a missing field, a number out of range): the writer's fault. */
    public static final class BadManifestException extends IOException {
        public BadManifestException(String message) {
            super(message);
        }
    }

    /** Writes atomically (temporary file, then rename). */
    public static void write(Manifest manifest, String source, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path temp = Files.createTempFile(parent, ".manifest-", ".tmp");
        try {
            try (OutputStream out = Files.newOutputStream(temp);
                    JsonGenerator json = MAPPER.getFactory().createGenerator(out, JsonEncoding.UTF8)) {
                json.writeStartObject();
                json.writeStringField("format", FORMAT);
                json.writeStringField("source", source);
                json.writeArrayFieldStart("shards");
                for (Shard s : manifest.shards()) {
                    json.writeRaw('\n');
                    json.writeStartObject();
                    json.writeStringField("bucket", s.key().bucket());
                    json.writeStringField("key", s.key().key());
                    json.writeNumberField("size", s.size());
                    json.writeStringField("etag", s.etag());
                    json.writeNumberField("samples", s.samples());
                    if (s.sampleOffsets() != null) {
                        json.writeArrayFieldStart("sample_offsets");
                        for (long o : s.sampleOffsets()) {
                            json.writeNumber(o);
                        }
                        json.writeEndArray();
                    }
                    json.writeEndObject();
                }
                json.writeEndArray();
                json.writeEndObject();
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    public static Manifest read(Path file) throws IOException {
        JsonNode root;
        try {
            root = MAPPER.readTree(file.toFile());
        } catch (NoSuchFileException | java.io.FileNotFoundException e) {
            throw new IOException(file + ": no such file");
        } catch (JsonProcessingException e) {
            throw new BadManifestException(file + ": not valid JSON (" + e.getOriginalMessage() + " at line " + e.getLocation().getLineNr() + ")");
        }
        return parse(root, file.toString());
    }

    /** A manifest from JSON bytes (a request body, an object in the store); {@code where} names it in errors. */
    public static Manifest read(byte[] json, String where) throws IOException {
        try {
            return parse(MAPPER.readTree(json), where);
        } catch (JsonProcessingException e) {
            throw new BadManifestException(where + ": not valid JSON (" + e.getOriginalMessage() + " at line " + e.getLocation().getLineNr() + ")");
        }
    }

    /** A manifest from a parsed JSON tree; {@code where} names it in errors, each a {@link BadManifestException}. */
    public static Manifest parse(JsonNode root, String where) throws IOException {
        if (root == null || !root.isObject()) {
            throw new BadManifestException(where + ": not a ferry manifest (expected a JSON object)");
        }
        if (!FORMAT.equals(root.path("format").asText(null))) {
            throw new BadManifestException(where + ": format is '" + root.path("format").asText("missing") + "', expected " + FORMAT);
        }
        JsonNode shards = root.path("shards");
        if (!shards.isArray() || shards.isEmpty()) {
            throw new BadManifestException(where + ": shards is missing or empty");
        }
        List<Shard> list = new ArrayList<>();
        for (int i = 0; i < shards.size(); i++) {
            JsonNode s = shards.get(i);
            String at = where + ": shards[" + i + "]";
            try {
                List<Long> offsets = null;
                if (s.has("sample_offsets")) {
                    JsonNode o = s.get("sample_offsets");
                    if (!o.isArray()) {
                        throw new IllegalArgumentException("sample_offsets is not an array");
                    }
                    offsets = new ArrayList<>();
                    for (int k = 0; k < o.size(); k++) {
                        offsets.add(wholeNumber(o.get(k), "sample_offsets[" + k + "]", 0, Long.MAX_VALUE));
                    }
                }
                list.add(new Shard(ObjectKey.of(text(s, "bucket"), text(s, "key")), wholeNumber(s.get("size"), "size", 0, Long.MAX_VALUE),
                        text(s, "etag"), (int) wholeNumber(s.get("samples"), "samples", 1, Integer.MAX_VALUE), offsets));
            } catch (IllegalArgumentException e) {
                throw new BadManifestException(at + ": " + e.getMessage());
            }
        }
        try {
            return new Manifest(list);
        } catch (IllegalArgumentException e) {
            throw new BadManifestException(where + ": " + e.getMessage());
        }
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual()) {
            throw new IllegalArgumentException(field + " is missing or not a string");
        }
        return v.asText();
    }

    /**
     * A JSON number that must be whole and within {@code [min, max]}: one that is not (a fraction, a number
     * past the range, such as 2^32 + 1 where an int is meant) is refused with a message naming the field and
     * the range, never rounded or cut to fit. {@code 4.0} is 4.
     *
     * @throws IllegalArgumentException when the value is missing, not a whole number, or out of range
     */
    public static long wholeNumber(JsonNode value, String field, long min, long max) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            throw new IllegalArgumentException(field + " is missing or not a whole number");
        }
        BigInteger whole;
        if (value.isIntegralNumber()) {
            whole = value.bigIntegerValue();
        } else if (value.isNumber()) {
            if (!Double.isFinite(value.doubleValue())) { // 1e999 reads as an infinite double
                throw new IllegalArgumentException(field + " must be " + min + " to " + max + ": " + value);
            }
            BigDecimal d = value.decimalValue();
            if (d.signum() != 0 && d.precision() - d.scale() > 19) {
                // past every long, and not expanded: 1e999999999 would be a billion digits
                throw new IllegalArgumentException(field + " must be " + min + " to " + max + ": " + value);
            }
            d = d.stripTrailingZeros();
            if (d.scale() > 0) {
                throw new IllegalArgumentException(field + " must be a whole number from " + min + " to " + max + ", not " + value);
            }
            whole = d.toBigIntegerExact();
        } else {
            throw new IllegalArgumentException(field + " must be a whole number from " + min + " to " + max + ", not " + value);
        }
        if (whole.compareTo(BigInteger.valueOf(min)) < 0 || whole.compareTo(BigInteger.valueOf(max)) > 0) {
            throw new IllegalArgumentException(field + " must be " + min + " to " + max + ": " + whole);
        }
        return whole.longValueExact();
    }
}
