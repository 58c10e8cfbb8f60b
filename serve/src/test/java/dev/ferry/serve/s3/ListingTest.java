package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.protocol.Reply;
import dev.ferry.serve.protocol.S3Error;
import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.ListPage;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import dev.ferry.writeback.PendingKey;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * ListObjectsV2, ListObjects (v1) and ListObjectVersions answered by {@link Listing} itself, over a real
 * {@link FileObjectStore}: prefix and delimiter grouping, max-keys counting objects and common prefixes together,
 * continuation and markers that neither skip nor repeat a name, start-after, URL encoding, the store's pages
 * joined into ferry's, a delimiter the store refuses grouped here, and write-back's pending writes laid over the
 * store's names.
 */
class ListingTest {
    static final List<String> KEYS = List.of("a/1", "a/2", "b/x/1", "b/x/2", "b/y", "c", "d-1", "d-2", "e", "f g");

    /** The store every test lists (none writes to it: write-back's pending writes are {@link #pending}). */
    @TempDir
    static Path tmp;
    static FileObjectStore origin;
    List<PendingKey> pending = new ArrayList<>();
    Listing listing;

    @BeforeAll
    static void store() throws IOException {
        origin = new FileObjectStore(tmp.resolve("origin"));
        origin.createBucket("data");
        for (String k : KEYS) {
            origin.put(ObjectKey.of("data", k), PutBody.ofBytes(k.getBytes(StandardCharsets.UTF_8)));
        }
    }

    @BeforeEach
    void setUp() {
        listing = over(origin);
    }

    /** A listing of {@code store}, with {@link #pending} as the writes not uploaded yet (filtered by prefix, as write-back does). */
    Listing over(ObjectStore store) {
        return new Listing(bucket -> store, (bucket, prefix) -> pending.stream().filter(p -> p.key().startsWith(prefix)).toList());
    }

    /** One answer, parsed: the names of the page, its flags and markers. */
    record Page(List<String> keys, List<String> prefixes, boolean truncated, Document xml) {
        String text(String element) {
            NodeList found = xml.getElementsByTagName(element);
            return found.getLength() == 0 ? null : found.item(0).getTextContent();
        }

        /** Keys and common prefixes in key order, as S3 counts them against max-keys. */
        List<String> names() {
            TreeSet<String> all = new TreeSet<>(keys);
            all.addAll(prefixes);
            return List.copyOf(all);
        }
    }

    static S3Service.Request request(String... namesAndValues) {
        Map<String, List<String>> query = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            if (namesAndValues[i + 1] != null) {
                query.put(namesAndValues[i], List.of(namesAndValues[i + 1]));
            }
        }
        return new S3Service.Request(HttpMethod.GET, "data", null, query, new DefaultHttpHeaders(), null);
    }

    static Page parse(Reply reply, String entry, String keyElement) throws Exception {
        assertThat(reply.status().code()).isEqualTo(200);
        Document xml = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(((Reply.Full) reply).body()));
        List<String> keys = new ArrayList<>();
        NodeList entries = xml.getElementsByTagName(entry);
        for (int i = 0; i < entries.getLength(); i++) {
            keys.add(((Element) entries.item(i)).getElementsByTagName(keyElement).item(0).getTextContent());
        }
        List<String> prefixes = new ArrayList<>();
        NodeList common = xml.getElementsByTagName("CommonPrefixes");
        for (int i = 0; i < common.getLength(); i++) {
            prefixes.add(((Element) common.item(i)).getElementsByTagName("Prefix").item(0).getTextContent());
        }
        return new Page(keys, prefixes, Boolean.parseBoolean(xml.getElementsByTagName("IsTruncated").item(0).getTextContent()), xml);
    }

    Page v2(String... namesAndValues) throws Exception {
        List<String> params = new ArrayList<>(List.of("list-type", "2"));
        params.addAll(Arrays.asList(namesAndValues)); // values may be null: not sent
        return parse(listing.listObjects(request(params.toArray(String[]::new))), "Contents", "Key");
    }

    Page v1(String... namesAndValues) throws Exception {
        return parse(listing.listObjects(request(namesAndValues)), "Contents", "Key");
    }

    /** Every page of a ListObjectsV2 of {@code maxKeys}, following the continuation tokens; each truncated page is full. */
    List<String> allV2(int maxKeys, String prefix, String delimiter, String startAfter) throws Exception {
        List<String> names = new ArrayList<>();
        String token = null;
        for (int pages = 0; pages < 100; pages++) {
            Page p = v2("max-keys", Integer.toString(maxKeys), "prefix", prefix, "delimiter", delimiter, "start-after", startAfter,
                    "continuation-token", token);
            assertThat(Integer.parseInt(p.text("KeyCount"))).isEqualTo(p.keys().size() + p.prefixes().size());
            names.addAll(p.names());
            if (!p.truncated()) {
                assertThat(p.text("NextContinuationToken")).isNull();
                return names;
            }
            assertThat(p.names()).as("a truncated page is full").hasSize(maxKeys);
            token = p.text("NextContinuationToken");
        }
        throw new AssertionError("the listing never ended");
    }

    /** What S3 lists for {@link #KEYS}: the names under {@code prefix}, rolled up at {@code delimiter}, after {@code after}. */
    static List<String> expected(String prefix, String delimiter, String after) {
        TreeSet<String> names = new TreeSet<>();
        for (String key : KEYS) {
            if (!key.startsWith(prefix)) {
                continue;
            }
            int d = delimiter == null ? -1 : key.indexOf(delimiter, prefix.length());
            String name = d < 0 ? key : key.substring(0, d + delimiter.length());
            if (after == null || name.compareTo(after) > 0) {
                names.add(name);
            }
        }
        return List.copyOf(names);
    }

    static void assertInvalidArgument(ThrowingListing call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(S3Error.class, e -> {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.code()).isEqualTo("InvalidArgument");
        });
    }

    @FunctionalInterface
    interface ThrowingListing {
        Object run() throws Exception;
    }

    // ---- prefix and delimiter ------------------------------------------------------------------------

    @Test
    void delimiter_rollsKeysUpIntoCommonPrefixes_afterThePrefix() throws Exception {
        Page root = v2("delimiter", "/");
        assertThat(root.keys()).containsExactly("c", "d-1", "d-2", "e", "f g");
        assertThat(root.prefixes()).containsExactly("a/", "b/");
        assertThat(root.text("KeyCount")).isEqualTo("7");
        assertThat(root.truncated()).isFalse();

        Page under = v2("prefix", "b/", "delimiter", "/");
        assertThat(under.keys()).containsExactly("b/y");
        assertThat(under.prefixes()).containsExactly("b/x/");
        assertThat(under.text("Prefix")).isEqualTo("b/");
        assertThat(under.text("Delimiter")).isEqualTo("/");
    }

    @Test
    void prefixWithoutDelimiter_listsEveryKeyUnderIt() throws Exception {
        Page p = v2("prefix", "b/");

        assertThat(p.keys()).containsExactly("b/x/1", "b/x/2", "b/y");
        assertThat(p.prefixes()).isEmpty();
    }

    @Test
    void delimiterOtherThanSlash_groupsAtItsFirstOccurrenceAfterThePrefix() throws Exception {
        assertThat(v2("delimiter", "-").names()).isEqualTo(expected("", "-", null)).contains("d-");
        assertThat(v2("prefix", "b/", "delimiter", "x").names()).containsExactly("b/x", "b/y");
    }

    // ---- max-keys, continuation, start-after, markers ----------------------------------------------

    @Test
    void maxKeys_countsObjectsAndPrefixesTogether_andContinuationNeitherSkipsNorRepeats() throws Exception {
        for (int maxKeys = 1; maxKeys <= 4; maxKeys++) {
            assertThat(allV2(maxKeys, null, "/", null)).as("delimiter, max-keys %d", maxKeys).isEqualTo(expected("", "/", null));
            assertThat(allV2(maxKeys, null, null, null)).as("no delimiter, max-keys %d", maxKeys).isEqualTo(expected("", null, null));
            assertThat(allV2(maxKeys, "b/", "/", null)).as("prefix, max-keys %d", maxKeys).isEqualTo(expected("b/", "/", null));
        }
    }

    @Test
    void startAfter_skipsEveryNameUpToIt_onEveryPage() throws Exception {
        assertThat(v2("start-after", "b/y").names()).containsExactly("c", "d-1", "d-2", "e", "f g");
        assertThat(v2("start-after", "a/1").names()).startsWith("a/2", "b/x/1");
        assertThat(v2("start-after", "zzz").names()).isEmpty();
        assertThat(v2("start-after", "b/y").text("StartAfter")).isEqualTo("b/y");
        for (String after : List.of("a/1", "b/", "c", "d-2")) {
            assertThat(allV2(2, null, null, after)).as("start-after %s", after).isEqualTo(expected("", null, after));
            assertThat(allV2(2, null, "/", after)).as("start-after %s, delimiter", after).isEqualTo(expected("", "/", after));
        }
    }

    @Test
    void maxKeysZero_isAnEmptyPage_notTruncated_andOver1000_isCapped() throws Exception {
        Page none = v2("max-keys", "0");
        assertThat(none.names()).isEmpty();
        assertThat(none.truncated()).isFalse();

        assertThat(v2("max-keys", "5000").text("MaxKeys")).isEqualTo("1000");
    }

    @Test
    void malformedArguments_areInvalidArgument() {
        assertInvalidArgument(() -> v2("max-keys", "-1"));
        assertInvalidArgument(() -> v2("max-keys", "ten"));
        assertInvalidArgument(() -> v2("encoding-type", "base64"));
        assertInvalidArgument(() -> v1("list-type", "3"));
    }

    @Test
    void v1_resumesAtNextMarker_theLastNameListed() throws Exception {
        List<String> names = new ArrayList<>();
        String marker = null;
        for (int pages = 0; ; pages++) {
            assertThat(pages).as("the listing ends").isLessThan(100);
            Page p = v1("max-keys", "2", "delimiter", "/", "marker", marker);
            assertThat(p.text("Marker")).isEqualTo(marker == null ? "" : marker);
            names.addAll(p.names());
            if (!p.truncated()) {
                assertThat(p.text("NextMarker")).isNull();
                break;
            }
            assertThat(p.text("NextMarker")).isEqualTo(p.names().getLast());
            marker = p.text("NextMarker");
        }
        assertThat(names).isEqualTo(expected("", "/", null));
    }

    @Test
    void encodingTypeUrl_encodesKeysAndPrefixes_butNotTheirSlashes() throws Exception {
        Page p = v2("prefix", "f", "encoding-type", "url");
        assertThat(p.keys()).containsExactly("f%20g");
        assertThat(p.text("EncodingType")).isEqualTo("url");

        assertThat(v2("delimiter", "/", "prefix", "b/", "encoding-type", "url").prefixes()).containsExactly("b/x/");
        assertThat(v2("prefix", "f").keys()).as("not asked: as is").containsExactly("f g");
    }

    // ---- over the store's pages ----------------------------------------------------------------------

    /** The store answers at most two names a page: a ferry page spans several of its pages. */
    static final class SmallPages extends ForwardingObjectStore {
        final AtomicInteger lists = new AtomicInteger();

        SmallPages(ObjectStore delegate) {
            super(delegate);
        }

        @Override
        public ListPage list(ListRequest request) throws IOException {
            lists.incrementAndGet();
            return delegate.list(request.withMaxKeys(Math.min(2, request.maxKeys())));
        }
    }

    @Test
    void storePagesSmallerThanAPage_areJoinedIntoOne_andResumedWithin() throws Exception {
        SmallPages small = new SmallPages(origin);
        listing = over(small);

        Page all = v2("delimiter", "/");
        assertThat(all.names()).isEqualTo(expected("", "/", null));
        assertThat(all.truncated()).isFalse();
        assertThat(small.lists.get()).as("seven names, two a store page").isGreaterThanOrEqualTo(4);
        for (int maxKeys = 1; maxKeys <= 4; maxKeys++) {
            assertThat(allV2(maxKeys, null, null, null)).as("max-keys %d", maxKeys).isEqualTo(expected("", null, null));
            assertThat(allV2(maxKeys, null, "/", "a/2")).as("max-keys %d, delimiter, start-after", maxKeys)
                    .isEqualTo(expected("", "/", "a/2"));
        }
    }

    @Test
    void aMarker_isWhereTheStoresFirstPageStarts_notReachedByPagingFromTheTop() throws Exception {
        SmallPages small = new SmallPages(origin);
        listing = over(small);

        assertThat(v2("start-after", "e").names()).containsExactly("f g");
        assertThat(small.lists.get()).as("one store page, not the five before it").isEqualTo(1);
        assertThat(v2("start-after", "d-1", "delimiter", "/").names()).containsExactly("d-2", "e", "f g");
        assertThat(small.lists.get()).as("two store pages from the marker").isEqualTo(1 + 2);
    }

    /** A store that takes only '/' as a delimiter, as s3proxy does. */
    static final class SlashOnly extends ForwardingObjectStore {
        final AtomicInteger refused = new AtomicInteger();

        SlashOnly(ObjectStore delegate) {
            super(delegate);
        }

        @Override
        public ListPage list(ListRequest request) throws IOException {
            if (request.delimiter() != null && !request.delimiter().equals("/")) {
                refused.incrementAndGet();
                throw new StoreException(StoreException.Kind.FATAL, 400, "InvalidArgument", "only '/' is a delimiter here", null);
            }
            return delegate.list(request);
        }
    }

    @Test
    void delimiterTheStoreRefuses_isGroupedHere_asTheStoreWouldHaveGroupedIt_fromThenOnWithoutAsking() throws Exception {
        SlashOnly slashOnly = new SlashOnly(origin);
        listing = over(slashOnly);

        assertThat(v2("delimiter", "-").names()).isEqualTo(expected("", "-", null));
        for (int maxKeys = 1; maxKeys <= 3; maxKeys++) {
            assertThat(allV2(maxKeys, null, "-", null)).as("max-keys %d", maxKeys).isEqualTo(expected("", "-", null));
        }
        assertThat(allV2(2, "b/", "x", null)).isEqualTo(expected("b/", "x", null));
        assertThat(slashOnly.refused.get()).as("asked once").isEqualTo(1);
        assertThat(v2("delimiter", "/").names()).as("'/' still goes to the store").isEqualTo(expected("", "/", null));
    }

    // ---- write-back's pending writes -----------------------------------------------------------------

    @Test
    void pendingWrites_areListedWithTheirSize_andPendingDeletesHideTheirKeys_andEmptiedPrefixes() throws Exception {
        ObjectMeta written = new ObjectMeta(ObjectKey.of("data", "g"), 12345, "pending-etag", null, Instant.parse("2024-05-01T12:00:00Z"));
        pending.add(new PendingKey("c", null));
        pending.add(new PendingKey("b/x/1", null));
        pending.add(new PendingKey("b/x/2", null));
        pending.add(new PendingKey("a/3", new ObjectMeta(ObjectKey.of("data", "a/3"), 1, "e3", null, Instant.EPOCH)));
        pending.add(new PendingKey("g", written));

        assertThat(v2().keys()).containsExactly("a/1", "a/2", "a/3", "b/y", "d-1", "d-2", "e", "f g", "g");
        assertThat(v2("delimiter", "/").names()).containsExactly("a/", "b/", "d-1", "d-2", "e", "f g", "g");
        assertThat(v2("prefix", "b/", "delimiter", "/").names()).as("every key under b/x/ deleted").containsExactly("b/y");
        Page g = v2("prefix", "g");
        assertThat(g.text("Size")).isEqualTo("12345");
        assertThat(g.text("ETag")).isEqualTo("\"pending-etag\"");
        assertThat(allV2(2, null, null, null)).containsExactly("a/1", "a/2", "a/3", "b/y", "d-1", "d-2", "e", "f g", "g");
    }

    // ---- ListObjectVersions --------------------------------------------------------------------------

    @Test
    void versions_listEachObjectAsItsOneLatestVersionNull() throws Exception {
        Page p = parse(listing.listVersions(request("versions", "", "prefix", "a/")), "Version", "Key");

        assertThat(p.keys()).containsExactly("a/1", "a/2");
        NodeList versions = p.xml().getElementsByTagName("Version");
        for (int i = 0; i < versions.getLength(); i++) {
            Element v = (Element) versions.item(i);
            assertThat(v.getElementsByTagName("VersionId").item(0).getTextContent()).isEqualTo("null");
            assertThat(v.getElementsByTagName("IsLatest").item(0).getTextContent()).isEqualTo("true");
        }
        Page afterMarker = parse(listing.listVersions(request("versions", "", "key-marker", "d-2", "version-id-marker", "null")),
                "Version", "Key");
        assertThat(afterMarker.keys()).containsExactly("e", "f g");
    }

    @Test
    void versionIdMarker_needsAKeyMarker_andCanOnlyBeNull() {
        assertInvalidArgument(() -> listing.listVersions(request("versions", "", "version-id-marker", "null")));
        assertInvalidArgument(() -> listing.listVersions(request("versions", "", "key-marker", "a/1", "version-id-marker", "v7")));
    }
}
