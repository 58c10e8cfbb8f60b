package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.serve.protocol.S3Error;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Conditional reads and writes as S3 documents them (GetObject, HeadObject, PutObject): If-Match and
 * If-Unmodified-Since fail with 412, If-None-Match and If-Modified-Since answer 304; an ETag condition present
 * overrides its date counterpart; a 412 wins over a 304; dates compare to the second, and one that does not parse
 * is ignored. {@code notModified} true is a 304, false a 200.
 */
class PreconditionsTest {
    static final ObjectKey KEY = ObjectKey.of("data", "shard-0.tar");
    /** Modified at 12:00:00.750: the fraction of a second is below what an HTTP date can say. */
    static final Instant MODIFIED = Instant.parse("2024-05-01T12:00:00.750Z");
    static final ObjectMeta META = new ObjectMeta(KEY, 10, "abc123", null, MODIFIED);
    static final String SAME_SECOND = date(Instant.parse("2024-05-01T12:00:00Z"));
    static final String EARLIER = date(Instant.parse("2024-05-01T11:59:59Z"));
    static final String LATER = date(Instant.parse("2024-05-01T12:00:01Z"));

    static String date(Instant t) {
        return DateTimeFormatter.RFC_1123_DATE_TIME.format(t.atZone(ZoneOffset.UTC));
    }

    static HttpHeaders headers(String... namesAndValues) {
        HttpHeaders h = new DefaultHttpHeaders();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            h.add(namesAndValues[i], namesAndValues[i + 1]);
        }
        return h;
    }

    static boolean notModified(String... namesAndValues) throws S3Error {
        return Preconditions.notModified(headers(namesAndValues), META, KEY);
    }

    static void assertS3Error(ThrowingCallable call, int status, String code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(S3Error.class, e -> {
            assertThat(e.status()).isEqualTo(status);
            assertThat(e.code()).isEqualTo(code);
        });
    }

    static void assertPreconditionFailed(String... namesAndValues) {
        assertS3Error(() -> notModified(namesAndValues), 412, "PreconditionFailed");
    }

    // ---- reads, one condition at a time -----------------------------------------------------------

    @Test
    void noConditions_isAPlainRead() throws S3Error {
        assertThat(notModified()).isFalse();
    }

    @Test
    void ifMatch_passesOnTheETag_quotedOrNot_inAListOrStar() throws S3Error {
        assertThat(notModified("If-Match", "\"abc123\"")).isFalse();
        assertThat(notModified("If-Match", "abc123")).isFalse();
        assertThat(notModified("If-Match", "\"other\", \"abc123\"")).isFalse();
        assertThat(notModified("If-Match", "*")).isFalse();
    }

    @Test
    void ifMatch_onAnotherETag_is412() {
        assertPreconditionFailed("If-Match", "\"other\"");
        assertPreconditionFailed("If-Match", "\"abc\"");
    }

    @Test
    void ifNoneMatch_onTheETag_is304_andOnAnotherIsARead() throws S3Error {
        assertThat(notModified("If-None-Match", "\"abc123\"")).isTrue();
        assertThat(notModified("If-None-Match", "W/\"abc123\"")).as("weak comparison").isTrue();
        assertThat(notModified("If-None-Match", "\"x\", \"abc123\"")).isTrue();
        assertThat(notModified("If-None-Match", "*")).isTrue();
        assertThat(notModified("If-None-Match", "\"other\"")).isFalse();
    }

    @Test
    void ifModifiedSince_comparesToTheSecond() throws S3Error {
        assertThat(notModified("If-Modified-Since", SAME_SECOND)).as("the fraction is not a modification").isTrue();
        assertThat(notModified("If-Modified-Since", LATER)).isTrue();
        assertThat(notModified("If-Modified-Since", EARLIER)).isFalse();
    }

    @Test
    void ifUnmodifiedSince_comparesToTheSecond() throws S3Error {
        assertThat(notModified("If-Unmodified-Since", SAME_SECOND)).isFalse();
        assertThat(notModified("If-Unmodified-Since", LATER)).isFalse();
        assertPreconditionFailed("If-Unmodified-Since", EARLIER);
    }

    @Test
    void dateThatDoesNotParse_isIgnored() throws S3Error {
        assertThat(notModified("If-Unmodified-Since", "yesterday")).isFalse();
        assertThat(notModified("If-Modified-Since", "2024-05-01T12:00:00Z")).as("ISO 8601 is not an HTTP date").isFalse();
    }

    // ---- reads, conditions together (S3's GetObject documentation names the first two) ----------------

    @Test
    void ifMatchTrue_overridesAFailingIfUnmodifiedSince() throws S3Error {
        assertThat(notModified("If-Match", "\"abc123\"", "If-Unmodified-Since", EARLIER)).isFalse();
    }

    @Test
    void ifNoneMatchFalse_withIfModifiedSinceTrue_is304() throws S3Error {
        assertThat(notModified("If-None-Match", "\"abc123\"", "If-Modified-Since", EARLIER)).isTrue();
    }

    @Test
    void ifNoneMatchTrue_overridesAnIfModifiedSinceThatWouldSay304() throws S3Error {
        assertThat(notModified("If-None-Match", "\"other\"", "If-Modified-Since", LATER)).isFalse();
    }

    @Test
    void failedIfMatch_is412_evenWhenIfNoneMatchWouldSay304() {
        assertPreconditionFailed("If-Match", "\"other\"", "If-None-Match", "\"abc123\"");
    }

    @Test
    void failedIfUnmodifiedSince_is412_evenWhenIfNoneMatchOrIfModifiedSinceWouldSay304() {
        assertPreconditionFailed("If-Unmodified-Since", EARLIER, "If-None-Match", "\"abc123\"");
        assertPreconditionFailed("If-Unmodified-Since", EARLIER, "If-Modified-Since", LATER);
    }

    // ---- writes -----------------------------------------------------------------------------------

    @Test
    void onlyETagConditions_makeAWriteConditional() {
        assertThat(Preconditions.conditionalWrite(headers("If-None-Match", "*"))).isTrue();
        assertThat(Preconditions.conditionalWrite(headers("If-Match", "\"abc123\""))).isTrue();
        assertThat(Preconditions.conditionalWrite(headers("If-Unmodified-Since", EARLIER))).isFalse();
        assertThat(Preconditions.conditionalWrite(headers())).isFalse();
    }

    @Test
    void writeIfNoneMatchStar_passesOnlyWhenThereIsNoObject() {
        assertThatCode(() -> Preconditions.checkWrite(headers("If-None-Match", "*"), KEY, null)).doesNotThrowAnyException();
        assertS3Error(() -> Preconditions.checkWrite(headers("If-None-Match", "*"), KEY, META), 412, "PreconditionFailed");
    }

    @Test
    void writeIfNoneMatchWithAnETag_isNotImplemented() {
        assertS3Error(() -> Preconditions.checkWrite(headers("If-None-Match", "\"abc123\""), KEY, null), 501, "NotImplemented");
    }

    @Test
    void writeIfMatch_needsTheObject_withThatETag() {
        assertThatCode(() -> Preconditions.checkWrite(headers("If-Match", "\"abc123\""), KEY, META)).doesNotThrowAnyException();
        assertS3Error(() -> Preconditions.checkWrite(headers("If-Match", "\"other\""), KEY, META), 412, "PreconditionFailed");
        assertS3Error(() -> Preconditions.checkWrite(headers("If-Match", "\"abc123\""), KEY, null), 404, "NoSuchKey");
    }

    @Test
    void unconditionalWrite_passesWhateverIsThere() {
        assertThatCode(() -> Preconditions.checkWrite(headers(), KEY, META)).doesNotThrowAnyException();
        assertThatCode(() -> Preconditions.checkWrite(headers(), KEY, null)).doesNotThrowAnyException();
    }
}
