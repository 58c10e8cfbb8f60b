package dev.ferry.plan;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.store.ObjectKey;
import java.io.IOException;
import java.io.OutputStream;
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
            throw new IOException(file + ": not valid JSON (" + e.getOriginalMessage() + " at line " + e.getLocation().getLineNr() + ")");
        }
        return parse(root, file.toString());
    }

    /** A manifest from JSON bytes (a request body, an object in the store); {@code where} names it in errors. */
    public static Manifest read(byte[] json, String where) throws IOException {
        try {
            return parse(MAPPER.readTree(json), where);
        } catch (JsonProcessingException e) {
            throw new IOException(where + ": not valid JSON (" + e.getOriginalMessage() + " at line " + e.getLocation().getLineNr() + ")");
        }
    }

    /** A manifest from a parsed JSON tree; {@code where} names it in errors. */
    public static Manifest parse(JsonNode root, String where) throws IOException {
        if (root == null || !root.isObject()) {
            throw new IOException(where + ": not a ferry manifest (expected a JSON object)");
        }
        if (!FORMAT.equals(root.path("format").asText(null))) {
            throw new IOException(where + ": format is '" + root.path("format").asText("missing") + "', expected " + FORMAT);
        }
        JsonNode shards = root.path("shards");
        if (!shards.isArray() || shards.isEmpty()) {
            throw new IOException(where + ": shards is missing or empty");
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
                    for (JsonNode n : o) {
                        if (!n.canConvertToLong()) {
                            throw new IllegalArgumentException("sample_offsets holds '" + n + "', not a number");
                        }
                        offsets.add(n.asLong());
                    }
                }
                list.add(new Shard(ObjectKey.of(text(s, "bucket"), text(s, "key")), number(s, "size"), text(s, "etag"),
                        (int) number(s, "samples"), offsets));
            } catch (IllegalArgumentException e) {
                throw new IOException(at + ": " + e.getMessage());
            }
        }
        try {
            return new Manifest(list);
        } catch (IllegalArgumentException e) {
            throw new IOException(where + ": " + e.getMessage());
        }
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual()) {
            throw new IllegalArgumentException(field + " is missing or not a string");
        }
        return v.asText();
    }

    private static long number(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.canConvertToLong()) {
            throw new IllegalArgumentException(field + " is missing or not a whole number");
        }
        return v.asLong();
    }
}
