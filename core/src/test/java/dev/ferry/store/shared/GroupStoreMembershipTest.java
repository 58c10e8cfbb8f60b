package dev.ferry.store.shared;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.ForwardingObjectStore;
import dev.ferry.store.GetRequest;
import dev.ferry.store.ObjectContent;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.ObjectStore;
import dev.ferry.store.PutBody;
import dev.ferry.store.StoreException;
import dev.ferry.store.file.FileObjectStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A group whose members change while it serves: a member that joins takes about its share and only that, one
 * that leaves gives up only its own keys, one that fails is skipped for the next in each key's ranking until
 * it answers again, and no read fails meanwhile. The members are stores reaching one folder, each counting
 * the reads it serves, one of them able to refuse like a dead daemon.
 */
class GroupStoreMembershipTest {
    static final int KEYS = 2000;

    @TempDir
    Path dir;
    FileObjectStore origin;
    final Set<String> dead = ConcurrentHashMap.newKeySet();
    final Map<String, AtomicLong> served = new ConcurrentHashMap<>();
    final List<ObjectKey> keys = new ArrayList<>();

    @BeforeEach
    void keys() throws IOException {
        origin = new FileObjectStore(dir);
        origin.createBucket("data");
        for (int i = 0; i < KEYS; i++) {
            keys.add(ObjectKey.of("data", "train/shard-" + i + ".tar"));
        }
    }

    /** Writes the first {@code n} keys' objects (each write is synced: a few hundred keep the test short). */
    void write(int n) throws IOException {
        for (ObjectKey k : keys.subList(0, n)) {
            origin.put(k, PutBody.ofBytes(("object " + k.key()).getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** A member's daemon: serves from the folder, counts what it serves, refuses while it is dead. */
    ObjectStore member(String url) {
        return new ForwardingObjectStore(origin) {
            @Override
            public ObjectContent get(GetRequest request) throws IOException {
                if (dead.contains(url)) {
                    throw new StoreException(StoreException.Kind.RETRYABLE, 0, "connection refused: " + url, null);
                }
                served.computeIfAbsent(url, u -> new AtomicLong()).incrementAndGet();
                return super.get(request);
            }

            @Override
            public void close() {
            }
        };
    }

    static List<String> members(int n) {
        List<String> m = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            m.add("http://10.0.0." + (i + 1) + ":9099");
        }
        return m;
    }

    GroupStore group(List<String> members, String self) {
        return new GroupStore(members, self, origin, this::member, Duration.ofSeconds(30));
    }

    Map<ObjectKey, String> owners(GroupStore g) {
        Map<ObjectKey, String> out = new java.util.HashMap<>();
        keys.forEach(k -> out.put(k, g.ownerOf(k)));
        return out;
    }

    @Test
    void aMemberJoining_takesAboutItsShare_andOnlyKeysMoveToIt() {
        GroupStore g = group(members(4), members(4).get(0));
        Map<ObjectKey, String> before = owners(g);
        List<ObjectStore> retired = g.update(members(5), members(5).get(0));
        assertThat(retired).isEmpty();
        Map<ObjectKey, String> after = owners(g);
        long moved = keys.stream().filter(k -> !before.get(k).equals(after.get(k))).count();
        assertThat(keys.stream().filter(k -> !before.get(k).equals(after.get(k)))).allMatch(k -> after.get(k).equals(members(5).get(4)));
        assertThat((double) moved / KEYS).as("share of keys that change owner").isBetween(0.17, 0.23);
        assertThat(g.stats().changes()).as("4 joins, then 1").isEqualTo(5);
    }

    @Test
    void aMemberLeaving_givesUpOnlyItsKeys_toTheNextInTheirRanking() {
        GroupStore g = group(members(4), null);
        Map<ObjectKey, String> before = owners(g);
        String leaving = members(4).get(2);
        List<String> rest = new ArrayList<>(members(4));
        rest.remove(leaving);
        assertThat(g.update(rest, null)).hasSize(1);
        Rendezvous ring = new Rendezvous(members(4));
        for (ObjectKey k : keys) {
            if (before.get(k).equals(leaving)) {
                assertThat(g.ownerOf(k)).isEqualTo(members(4).get(ring.rank(Rendezvous.keyOf(k)).get(1)));
            } else {
                assertThat(g.ownerOf(k)).isEqualTo(before.get(k));
            }
        }
    }

    @Test
    void aMemberThatFails_isSkippedForTheNextOwner_withNoFailedRead_untilItAnswersAgain() throws IOException {
        List<String> m = members(4);
        GroupStore g = group(m, null);
        String victim = m.get(1);
        dead.add(victim);
        write(200);
        for (ObjectKey k : keys.subList(0, 200)) {
            try (ObjectContent c = g.get(GetRequest.range(k, dev.ferry.store.ByteRange.of(0, 6)))) {
                assertThat(c.stream().readAllBytes()).hasSize(6);
            }
        }
        assertThat(served.getOrDefault(victim, new AtomicLong()).get()).isZero();
        assertThat(g.stats().failovers()).as("one read found it dead; the rest skipped it").isEqualTo(1);
        assertThat(g.isUp(victim)).isFalse();
        assertThat(g.stats().members()).filteredOn(s -> s.url().equals(victim)).singleElement()
                .satisfies(s -> assertThat(s.up()).isFalse());
        long next = keys.stream().filter(k -> !g.ownerOf(k).equals(new GroupStore(m, null, origin, this::member, Duration.ZERO).ownerOf(k)))
                .count();
        assertThat((double) next / KEYS).as("the victim's share went to others").isBetween(0.2, 0.3);

        dead.remove(victim);
        g.answered(victim);
        assertThat(g.isUp(victim)).isTrue();
        assertThat(g.stats().changes()).as("4 joins, down, up").isEqualTo(6);
    }

    @Test
    void anEmptyGroup_readsTheOrigin() throws IOException {
        GroupStore g = new GroupStore(origin, this::member, Duration.ofSeconds(5));
        write(1);
        try (ObjectContent c = g.get(GetRequest.range(keys.get(0), dev.ferry.store.ByteRange.of(0, 6)))) {
            assertThat(c.stream().readAllBytes()).hasSize(6);
        }
        assertThat(g.ownerOf(keys.get(0))).isNull();
        assertThat(served).isEmpty();
    }
}
