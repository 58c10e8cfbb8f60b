package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectMeta;
import java.io.IOException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** What a read-only mount keeps of the versions it shows the kernel, and the nanoseconds it names them by. */
class AttrsTest {
    static final Instant T = Instant.parse("2026-12-06T04:00:00Z");

    static ObjectMeta meta(String key, String etag) {
        return meta(key, etag, T);
    }

    static ObjectMeta meta(String key, String etag, Instant lastModified) {
        return new ObjectMeta(ObjectKey.of("data", key), 10, etag, null, lastModified);
    }

    @Test
    void versionsShown_areKeptOnlyOnceRecording_andForgottenAllAtOncePastTheBound() throws IOException {
        Attrs attrs = new Attrs(true, 3);
        attrs.remember(meta("a", "1"));
        assertThat(attrs.shown(ObjectKey.of("data", "a"))).as("before recordShown").isNull();

        attrs.recordShown();
        for (String k : new String[] {"a", "b", "c"}) {
            attrs.remember(meta(k, "1"));
        }
        attrs.remember(meta("a", "2")); // another version of the same second replaces it, within the bound
        assertThat(attrs.shown(ObjectKey.of("data", "a")).etag()).isEqualTo("2");
        assertThat(attrs.shown(ObjectKey.of("data", "c"))).isNotNull();

        attrs.remember(meta("d", "1")); // a fourth file: the three are forgotten
        assertThat(attrs.shown(ObjectKey.of("data", "d"))).isNotNull();
        assertThat(attrs.shown(ObjectKey.of("data", "a"))).isNull();
        assertThat(attrs.shown(ObjectKey.of("data", "c"))).isNull();

        attrs.forget(ObjectKey.of("data", "d"));
        assertThat(attrs.shown(ObjectKey.of("data", "d"))).isNull();
    }

    @Test
    void aFileIsNeverShownAtAVersionOlderThanOneShownBefore() throws IOException {
        Attrs attrs = new Attrs(true);
        ObjectMeta older = meta("a", "1", T);
        ObjectMeta newer = meta("a", "2", T.plusSeconds(5));
        assertThat(attrs.toShow(older)).as("nothing recorded yet").isSameAs(older);
        attrs.recordShown();
        assertThat(attrs.toShow(older)).as("nothing shown yet").isSameAs(older);
        attrs.remember(newer);
        assertThat(attrs.toShow(older)).as("a stale listing's version after a newer one was shown").isSameAs(newer);
        attrs.remember(older);
        assertThat(attrs.shown(older.key())).isSameAs(newer);
        ObjectMeta newest = meta("a", "3", T.plusSeconds(9));
        assertThat(attrs.toShow(newest)).isSameAs(newest);
        attrs.remember(newest);
        assertThat(attrs.shown(older.key())).isSameAs(newest);
    }

    @Test
    void versionNanos_areWithinASecond_andTellETagsApart() {
        long a = Attrs.versionNanos("\"9b2cf535f27731c974343645a3985328\"");
        long b = Attrs.versionNanos("\"9b2cf535f27731c974343645a3985329\"");
        assertThat(a).isBetween(0L, 999_999_999L);
        assertThat(b).isBetween(0L, 999_999_999L).isNotEqualTo(a);
        assertThat(Attrs.versionNanos("\"9b2cf535f27731c974343645a3985328\"")).as("the same ETag, the same mtime").isEqualTo(a);
    }
}
