package dev.ferry.serve.jobs;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ferry.plan.ManifestJson;
import dev.ferry.serve.protocol.S3Error;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * JSON in and out of ferry's own API: a request's body read as an object, its numbers and the query's checked
 * against their bounds (an S3Error that names the field, 400 InvalidJson or InvalidArgument), and figures rounded for
 * an answer. Stateless.
 */
final class ApiJson {
    static final ObjectMapper JSON = new ObjectMapper();

    private ApiJson() {
    }

    /** The request's body as a JSON object: InvalidJson when it is empty, not JSON, or not an object. */
    static JsonNode parse(byte[] body) throws S3Error {
        if (body.length == 0) {
            throw S3Error.badRequest("InvalidJson", "the request needs a JSON body");
        }
        try {
            JsonNode n = JSON.readTree(body);
            if (n == null || !n.isObject()) {
                throw S3Error.badRequest("InvalidJson", "the body must be a JSON object");
            }
            return n;
        } catch (JsonProcessingException e) {
            throw S3Error.badRequest("InvalidJson", "the body is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw S3Error.badRequest("InvalidJson", "the body cannot be read as JSON: " + e.getMessage());
        }
    }

    /**
     * The whole number {@code field} of {@code n}, from {@code min} to {@code max}; {@code fallback} when it is absent or
     * null ({@link Long#MIN_VALUE}: required).
     */
    static long number(JsonNode n, String field, long fallback, long min, long max) throws S3Error {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            if (fallback == Long.MIN_VALUE) {
                throw S3Error.badRequest("InvalidArgument", field + " is missing");
            }
            return fallback;
        }
        try {
            return ManifestJson.wholeNumber(v, field, min, max);
        } catch (IllegalArgumentException e) {
            throw S3Error.badRequest("InvalidArgument", e.getMessage());
        }
    }

    /** The whole number {@code name} of the query, as {@link #number} reads a field. */
    static long param(Map<String, List<String>> query, String name, long fallback, long min, long max) throws S3Error {
        List<String> v = query.get(name);
        if (v == null || v.isEmpty()) {
            if (fallback == Long.MIN_VALUE) {
                throw S3Error.badRequest("InvalidArgument", name + " is missing from the query");
            }
            return fallback;
        }
        try {
            long x = Long.parseLong(v.get(0));
            if (x < min || x > max) {
                throw S3Error.badRequest("InvalidArgument", name + " must be " + min + " to " + max + ": " + x);
            }
            return x;
        } catch (NumberFormatException e) {
            throw S3Error.badRequest("InvalidArgument", name + " must be a whole number, not '" + v.get(0) + "'");
        }
    }

    /** The text {@code name} of the query, or null when it is missing or empty. */
    static String text(Map<String, List<String>> query, String name) {
        List<String> v = query.get(name);
        return v == null || v.isEmpty() || v.get(0).isEmpty() ? null : v.get(0);
    }

    /** The text {@code name} of the query; InvalidArgument when it is missing or empty. */
    static String requiredText(Map<String, List<String>> query, String name) throws S3Error {
        String v = text(query, name);
        if (v == null) {
            throw S3Error.badRequest("InvalidArgument", name + " is missing from the query");
        }
        return v;
    }

    /** {@code v} to {@code digits} decimals, for an answer (NaN and infinities as 0: JSON has neither). */
    static double round(double v, int digits) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return 0;
        }
        double f = Math.pow(10, digits);
        return Math.round(v * f) / f;
    }
}
