package dev.ferry.serve.s3;

import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.serve.protocol.Xml;
import dev.ferry.store.PendingUploads;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * ListMultipartUploads ({@code GET /bucket?uploads}): the uploads started and neither completed, aborted
 * nor expired, from every place the daemon keeps them (write-back's local staging, a folder store), by key
 * then start time; {@code prefix}, {@code key-marker} / {@code upload-id-marker} and {@code max-uploads}
 * (at most 1000) as S3 takes them. {@code delimiter} is not served.
 */
final class MultipartListing {
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    /** A source of pending uploads. */
    interface Source {
        List<PendingUploads.Upload> list(String bucket, String prefix) throws IOException;
    }

    private MultipartListing() {
    }

    static Reply list(S3Service.Request r, List<Source> sources) throws S3Error, IOException {
        if (r.param("delimiter") != null && !r.param("delimiter").isEmpty()) {
            throw S3Error.notImplemented("ListMultipartUploads with a delimiter");
        }
        String prefix = r.param("prefix") == null ? "" : r.param("prefix");
        int max = 1000;
        if (r.param("max-uploads") != null) {
            try {
                max = Math.min(1000, Integer.parseInt(r.param("max-uploads")));
            } catch (NumberFormatException e) {
                throw S3Error.invalidArgument("max-uploads must be a number, not '" + r.param("max-uploads") + "'");
            }
            if (max < 0) {
                throw S3Error.invalidArgument("max-uploads must not be negative: " + max);
            }
        }
        String keyMarker = r.param("key-marker") == null ? "" : r.param("key-marker");
        String idMarker = r.param("upload-id-marker") == null ? "" : r.param("upload-id-marker");
        List<PendingUploads.Upload> all = new ArrayList<>();
        for (Source s : sources) {
            all.addAll(s.list(r.bucket(), prefix));
        }
        all.sort(Comparator.comparing((PendingUploads.Upload u) -> u.key().key()).thenComparing(PendingUploads.Upload::uploadId));
        List<PendingUploads.Upload> page = new ArrayList<>();
        boolean truncated = false;
        for (PendingUploads.Upload u : all) {
            int c = u.key().key().compareTo(keyMarker);
            if (!keyMarker.isEmpty() && (c < 0 || (c == 0 && (idMarker.isEmpty() || u.uploadId().compareTo(idMarker) <= 0)))) {
                continue;
            }
            if (page.size() == max) {
                truncated = true;
                break;
            }
            page.add(u);
        }
        Xml x = new Xml().openRoot("ListMultipartUploadsResult").element("Bucket", r.bucket()).element("KeyMarker", keyMarker)
                .element("UploadIdMarker", idMarker);
        if (truncated) {
            PendingUploads.Upload last = page.get(page.size() - 1);
            x.element("NextKeyMarker", last.key().key()).element("NextUploadIdMarker", last.uploadId());
        }
        x.element("Prefix", prefix).element("MaxUploads", max).element("IsTruncated", truncated);
        for (PendingUploads.Upload u : page) {
            x.open("Upload").element("Key", u.key().key()).element("UploadId", u.uploadId())
                    .open("Initiator").element("ID", "ferry").element("DisplayName", "ferry").close("Initiator")
                    .open("Owner").element("ID", "ferry").element("DisplayName", "ferry").close("Owner")
                    .element("StorageClass", "STANDARD").element("Initiated", ISO.format(u.initiated())).close("Upload");
        }
        return Reply.xml(HttpResponseStatus.OK, x.close("ListMultipartUploadsResult"));
    }
}
