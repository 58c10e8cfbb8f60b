package dev.ferry.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link ObjectStore} owes its callers. Each implementation (the directory store, S3
 * against the embedded server, S3 against moto) extends this with a store and a bucket it may write to.
 * Every test works under its own fresh prefix, so implementations may share one bucket across tests.
 */
public abstract class AbstractObjectStoreContractTest {
    protected static final int MIB = 1 << 20;

    /** The store under test. */
    protected abstract ObjectStore store();

    /** A bucket that exists and that tests may write to. */
    protected abstract String bucket();

    private String prefix;

    @BeforeEach
    void freshPrefix() {
        prefix = "contract-" + UUID.randomUUID().toString().substring(0, 8) + "/";
    }

    /** The store's multipart uploads (every store under contract has them). */
    protected MultipartOperations multipart() throws StoreException {
        return MultipartOperations.of(store());
    }

    protected ObjectKey key(String name) {
        return ObjectKey.of(bucket(), prefix + name);
    }

    protected static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    @Test
    void put_thenHead_reportsSizeAndSameEtag() throws IOException {
        ObjectMeta written = store().put(key("a.bin"), PutBody.ofBytes(randomBytes(1000, 1)));
        ObjectMeta head = store().head(key("a.bin"));
        assertThat(head.size()).isEqualTo(1000);
        assertThat(head.etag()).isEqualTo(written.etag()).doesNotStartWith("\"");
        assertThat(head.key()).isEqualTo(key("a.bin"));
    }

    @Test
    void get_whole_returnsExactBytes() throws IOException {
        byte[] data = randomBytes(300_000, 2);
        store().put(key("whole"), PutBody.ofBytes(data));
        try (ObjectContent content = store().get(GetRequest.whole(key("whole")))) {
            assertThat(content.length()).isEqualTo(data.length);
            assertThat(content.meta().size()).isEqualTo(data.length);
            assertThat(content.stream().readAllBytes()).isEqualTo(data);
        }
    }

    @Test
    void get_range_returnsThatSlice() throws IOException {
        byte[] data = randomBytes(100_000, 3);
        store().put(key("ranged"), PutBody.ofBytes(data));
        try (ObjectContent content = store().get(GetRequest.range(key("ranged"), ByteRange.of(1234, 5000)))) {
            assertThat(content.range()).isEqualTo(ByteRange.of(1234, 5000));
            assertThat(content.meta().size()).isEqualTo(data.length);
            assertThat(content.stream().readAllBytes()).isEqualTo(java.util.Arrays.copyOfRange(data, 1234, 6234));
        }
    }

    @Test
    void get_rangePastEnd_isClippedToTheObject() throws IOException {
        byte[] data = randomBytes(1000, 4);
        store().put(key("short"), PutBody.ofBytes(data));
        byte[] tail = store().readBytes(key("short"), ByteRange.of(900, 500));
        assertThat(tail).isEqualTo(java.util.Arrays.copyOfRange(data, 900, 1000));
    }

    @Test
    void get_rangeStartingPastEnd_failsWithoutRetrying() throws IOException {
        store().put(key("tiny"), PutBody.ofBytes(randomBytes(10, 5)));
        assertThatThrownBy(() -> store().readBytes(key("tiny"), ByteRange.of(100, 10)))
                .isInstanceOf(StoreException.class)
                .satisfies(e -> assertThat(((StoreException) e).isRetryable()).isFalse());
    }

    @Test
    void emptyObject_roundTrips() throws IOException {
        store().put(key("empty"), PutBody.ofBytes(new byte[0]));
        assertThat(store().head(key("empty")).size()).isZero();
        assertThat(store().readBytes(key("empty"), null)).isEmpty();
    }

    @Test
    void head_missing_throwsNotFound() {
        assertThatThrownBy(() -> store().head(key("missing"))).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void get_missing_throwsNotFound() {
        assertThatThrownBy(() -> store().readBytes(key("missing"), null)).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void get_missingBucket_throwsNotFound() {
        assertThatThrownBy(() -> store().head(ObjectKey.of("no-such-bucket-" + UUID.randomUUID().toString().substring(0, 8), "k")))
                .isInstanceOf(StoreException.class)
                .satisfies(e -> assertThat(((StoreException) e).kind()).isEqualTo(StoreException.Kind.NOT_FOUND));
    }

    @Test
    void put_overwrite_changesEtagAndContent() throws IOException {
        ObjectMeta first = store().put(key("over"), PutBody.ofBytes("version one".getBytes(StandardCharsets.UTF_8)));
        ObjectMeta second = store().put(key("over"), PutBody.ofBytes("version two".getBytes(StandardCharsets.UTF_8)));
        assertThat(second.etag()).isNotEqualTo(first.etag());
        assertThat(new String(store().readBytes(key("over"), null), StandardCharsets.UTF_8)).isEqualTo("version two");
    }

    @Test
    void get_ifMatchOldEtag_failsPrecondition() throws IOException {
        ObjectMeta first = store().put(key("cond"), PutBody.ofBytes("one".getBytes(StandardCharsets.UTF_8)));
        store().put(key("cond"), PutBody.ofBytes("two!".getBytes(StandardCharsets.UTF_8)));
        assertThatThrownBy(() -> store().get(new GetRequest(key("cond"), null, first.etag())))
                .isInstanceOf(StoreException.class)
                .satisfies(e -> assertThat(((StoreException) e).kind()).isEqualTo(StoreException.Kind.PRECONDITION_FAILED));
    }

    @Test
    void get_ifMatchCurrentEtag_reads() throws IOException {
        ObjectMeta meta = store().put(key("cond-ok"), PutBody.ofBytes("same".getBytes(StandardCharsets.UTF_8)));
        try (ObjectContent content = store().get(new GetRequest(key("cond-ok"), ByteRange.of(1, 2), meta.etag()))) {
            assertThat(new String(content.stream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("am");
        }
    }

    @Test
    void keysWithSpacesAndUnicode_roundTrip() throws IOException {
        ObjectKey odd = key("dir with space/ünïcødé + plus=equals&amp.txt");
        store().put(odd, PutBody.ofBytes("odd".getBytes(StandardCharsets.UTF_8)));
        assertThat(store().readBytes(odd, null)).isEqualTo("odd".getBytes(StandardCharsets.UTF_8));
        ListPage page = store().list(ListRequest.of(bucket(), prefix + "dir with space/"));
        assertThat(page.objects()).extracting(ObjectMeta::key).containsExactly(odd);
    }

    @Test
    void list_prefix_returnsOnlyMatchingKeysInOrder() throws IOException {
        for (String name : List.of("b/2", "a/1", "a/3", "c", "a/2")) {
            store().put(key(name), PutBody.ofBytes(name.getBytes(StandardCharsets.UTF_8)));
        }
        ListPage page = store().list(ListRequest.of(bucket(), prefix + "a/"));
        assertThat(page.objects()).extracting(m -> m.key().key())
                .containsExactly(prefix + "a/1", prefix + "a/2", prefix + "a/3");
        assertThat(page.objects()).allSatisfy(m -> assertThat(m.size()).isEqualTo(3));
        assertThat(page.isTruncated()).isFalse();
    }

    @Test
    void list_delimiter_rollsUpCommonPrefixes() throws IOException {
        for (String name : List.of("x/1", "x/2", "y/1", "top")) {
            store().put(key(name), PutBody.ofBytes(new byte[] {1}));
        }
        ListPage page = store().list(ListRequest.of(bucket(), prefix).withDelimiter("/"));
        assertThat(page.commonPrefixes()).containsExactly(prefix + "x/", prefix + "y/");
        assertThat(page.objects()).extracting(m -> m.key().key()).containsExactly(prefix + "top");
    }

    @Test
    void list_paginated_visitsEveryKeyOnce() throws IOException {
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 23; i++) {
            String name = String.format("p/%03d", i);
            store().put(key(name), PutBody.ofBytes(new byte[] {(byte) i}));
            expected.add(prefix + name);
        }
        List<String> seen = new ArrayList<>();
        ListRequest request = ListRequest.of(bucket(), prefix + "p/").withMaxKeys(10);
        int pages = 0;
        while (true) {
            ListPage page = store().list(request);
            pages++;
            page.objects().forEach(m -> seen.add(m.key().key()));
            if (!page.isTruncated()) {
                break;
            }
            request = request.withContinuationToken(page.nextToken());
        }
        assertThat(seen).containsExactlyElementsOf(expected);
        assertThat(pages).isEqualTo(3);
    }

    @Test
    void list_startAfter_beginsPastThatKey_atAnyDepth_andPagesOnFromThere() throws IOException {
        List<String> names = List.of("a.b", "a/1", "a/x/2", "a0", "b/1", "b/2", "c"); // in key order
        for (String name : names) {
            store().put(key(name), PutBody.ofBytes(new byte[] {1}));
        }
        Map<String, List<String>> cases = new LinkedHashMap<>();
        cases.put("a/1", names.subList(2, 7)); // inside a folder: its later keys, and every one after it
        cases.put("a", names); // a folder's name without its '/': "a.b" sorts after it
        cases.put("a/", names.subList(1, 7));
        cases.put("b/", names.subList(4, 7));
        cases.put("b/9", names.subList(6, 7));
        cases.put("z", List.of());
        for (var c : cases.entrySet()) {
            List<String> seen = new ArrayList<>();
            ListRequest request = ListRequest.of(bucket(), prefix).withMaxKeys(2).withStartAfter(prefix + c.getKey());
            while (true) {
                ListPage page = store().list(request);
                page.objects().forEach(m -> seen.add(m.key().key().substring(prefix.length())));
                if (!page.isTruncated()) {
                    break;
                }
                request = request.withContinuationToken(page.nextToken());
            }
            assertThat(seen).as("start-after %s", c.getKey()).containsExactlyElementsOf(c.getValue());
        }
    }

    @Test
    void list_paginatedWithDelimiter_returnsEachPrefixOnce() throws IOException {
        for (int i = 0; i < 5; i++) {
            for (int j = 0; j < 3; j++) {
                store().put(key("d" + i + "/f" + j), PutBody.ofBytes(new byte[] {1}));
            }
        }
        List<String> seen = new ArrayList<>();
        ListRequest request = ListRequest.of(bucket(), prefix).withDelimiter("/").withMaxKeys(2);
        while (true) {
            ListPage page = store().list(request);
            seen.addAll(page.commonPrefixes());
            if (!page.isTruncated()) {
                break;
            }
            request = request.withContinuationToken(page.nextToken());
        }
        assertThat(seen).containsExactly(prefix + "d0/", prefix + "d1/", prefix + "d2/", prefix + "d3/", prefix + "d4/");
    }

    @Test
    void delete_removesObject_andDeletingAgainIsFine() throws IOException {
        store().put(key("gone"), PutBody.ofBytes(new byte[] {1, 2, 3}));
        store().delete(key("gone"));
        assertThatThrownBy(() -> store().head(key("gone"))).isInstanceOf(ObjectNotFoundException.class);
        store().delete(key("gone"));
    }

    @Test
    void multipart_assemblesPartsInOrder() throws IOException {
        byte[] p1 = randomBytes(5 * MIB, 10);
        byte[] p2 = randomBytes(5 * MIB, 11);
        byte[] p3 = randomBytes(123_456, 12);
        MultipartUpload upload = multipart().startMultipart(key("big.bin"));
        List<CompletedPart> parts = List.of(
                multipart().uploadPart(upload, 1, PutBody.ofBytes(p1)),
                multipart().uploadPart(upload, 2, PutBody.ofBytes(p2)),
                multipart().uploadPart(upload, 3, PutBody.ofBytes(p3)));
        ObjectMeta meta = multipart().completeMultipart(upload, parts);
        assertThat(meta.size()).isEqualTo(p1.length + p2.length + p3.length);
        assertThat(store().head(key("big.bin")).etag()).isEqualTo(meta.etag());
        byte[] middle = store().readBytes(key("big.bin"), ByteRange.of(5 * MIB - 10, 20));
        byte[] expected = new byte[20];
        System.arraycopy(p1, p1.length - 10, expected, 0, 10);
        System.arraycopy(p2, 0, expected, 10, 10);
        assertThat(middle).isEqualTo(expected);
        byte[] tail = store().readBytes(key("big.bin"), ByteRange.of(10L * MIB, p3.length));
        assertThat(tail).isEqualTo(p3);
    }

    @Test
    void multipart_aborted_leavesNoObject() throws IOException {
        MultipartUpload upload = multipart().startMultipart(key("aborted"));
        CompletedPart part = multipart().uploadPart(upload, 1, PutBody.ofBytes(randomBytes(1000, 13)));
        multipart().abortMultipart(upload);
        assertThatThrownBy(() -> multipart().completeMultipart(upload, List.of(part))).isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> store().head(key("aborted"))).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void putFromFile_roundTrips(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        byte[] data = randomBytes(2 * MIB + 17, 14);
        java.nio.file.Path file = dir.resolve("upload.bin");
        java.nio.file.Files.write(file, data);
        store().put(key("from-file"), PutBody.ofFile(file));
        assertThat(store().readBytes(key("from-file"), null)).isEqualTo(data);
    }
}
