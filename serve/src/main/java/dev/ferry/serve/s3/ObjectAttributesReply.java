package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.store.Checksum;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.Parts;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * GetObjectAttributes ({@code GET /b/k?attributes}, the attributes named by {@code x-amz-object-attributes}):
 * what HEAD tells, as XML. {@code ETag} unquoted (as S3 sends it here), {@code Checksum} when the object keeps one,
 * {@code ObjectParts} for an object made by a multipart upload (its part count, from its {@code -N} ETag, and its
 * parts where they are kept), {@code StorageClass} {@code STANDARD},
 * {@code ObjectSize}. Stateless.
 */
final class ObjectAttributesReply {
    static final String HEADER = "x-amz-object-attributes";
    private static final List<String> NAMES = List.of("ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize");
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);

    private ObjectAttributesReply() {
    }

    /** The attributes a request names, in S3's order; 400 InvalidArgument for none or an unknown one. */
    static Set<String> requested(S3Service.Request r) throws S3Error {
        Set<String> asked = new LinkedHashSet<>();
        for (String value : r.headers().getAll(HEADER)) {
            for (String name : value.split(",")) {
                String n = name.trim();
                if (n.isEmpty()) {
                    continue;
                }
                if (!NAMES.contains(n)) {
                    throw S3Error.invalidArgument("Invalid attribute name specified: '" + n + "' (" + String.join(", ", NAMES) + ")");
                }
                asked.add(n);
            }
        }
        if (asked.isEmpty()) {
            throw S3Error.invalidArgument("Empty Attribute Header: " + HEADER + " must name one of " + String.join(", ", NAMES));
        }
        return asked;
    }

    static Reply of(S3Service.Request r, ObjectMeta meta) throws S3Error {
        Set<String> asked = requested(r);
        Xml x = new Xml().openRoot("GetObjectAttributesResponse");
        if (asked.contains("ETag")) {
            x.element("ETag", meta.etag());
        }
        Checksum checksum = Checksum.of(meta.attributes());
        if (asked.contains("Checksum") && checksum != null) {
            x.open("Checksum").element(checksum.algorithm().element(), checksum.value()).element("ChecksumType", checksum.type().name())
                    .close("Checksum");
        }
        int parts = partsCount(meta.etag());
        if (asked.contains("ObjectParts") && parts > 0) {
            objectParts(x, r, meta, parts);
        }
        if (asked.contains("StorageClass")) {
            x.element("StorageClass", "STANDARD");
        }
        if (asked.contains("ObjectSize")) {
            x.element("ObjectSize", meta.size());
        }
        Reply.Full reply = Reply.xml(HttpResponseStatus.OK, x.close("GetObjectAttributesResponse"));
        reply.headers().set("Last-Modified", HTTP_DATE.format(meta.lastModified()));
        return reply;
    }

    /**
     * {@code <ObjectParts>}: the part count, and where the parts' sizes and checksums are kept (an upload with a
     * checksum, assembled by the folder store or write-back) the parts themselves, {@code x-amz-max-parts} (1000 by
     * default) after {@code x-amz-part-number-marker}, as S3 lists them (only for uploads with checksums).
     */
    private static void objectParts(Xml x, S3Service.Request r, ObjectMeta meta, int count) throws S3Error {
        x.open("ObjectParts");
        List<Long> sizes = Parts.sizes(meta.attributes());
        List<Checksum> sums = Parts.checksums(meta.attributes());
        if (sizes != null && sums != null && sizes.size() == count && sums.size() == count) {
            int max = header(r, "x-amz-max-parts", 1000);
            int marker = header(r, "x-amz-part-number-marker", 0);
            int last = Math.min(count, marker + max);
            x.element("PartNumberMarker", marker).element("NextPartNumberMarker", last < count ? last : null).element("MaxParts", max)
                    .element("IsTruncated", last < count);
            for (int n = marker + 1; n <= last; n++) {
                Checksum c = sums.get(n - 1);
                x.open("Part").element(c.algorithm().element(), c.value()).element("PartNumber", n).element("Size", sizes.get(n - 1))
                        .close("Part");
            }
        }
        x.element("PartsCount", count).close("ObjectParts");
    }

    private static int header(S3Service.Request r, String name, int otherwise) throws S3Error {
        String v = r.headers().get(name);
        if (v == null) {
            return otherwise;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 0) {
                return name.equals("x-amz-max-parts") ? Math.min(Math.max(n, 1), 1000) : n;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw S3Error.invalidArgument(name + " must be a number that is not negative, not '" + v + "'");
    }

    /** The part count an S3 multipart ETag ({@code md5-N}) names, or 0. */
    static int partsCount(String etag) {
        int dash = etag.lastIndexOf('-');
        if (dash < 0 || dash == etag.length() - 1) {
            return 0;
        }
        try {
            int n = Integer.parseInt(etag.substring(dash + 1));
            return n > 0 && n <= dev.ferry.store.CompletedPart.MAX_PARTS ? n : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
