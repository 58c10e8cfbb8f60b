package dev.ferry.store.shared;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ownership by rendezvous hashing: balanced, and a member joining or leaving moves only its own share. */
class RendezvousTest {
    static final int KEYS = 20_000;

    private static List<String> members(int n) {
        List<String> m = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            m.add("http://10.0.0." + (i + 1) + ":9099");
        }
        return m;
    }

    @Test
    void keysSpreadEvenlyAndTheOwnerIsTheFirstRanked() {
        Rendezvous r = new Rendezvous(members(4));
        int[] owned = new int[4];
        for (int k = 0; k < KEYS; k++) {
            String key = "train/shard-" + k + ".tar";
            owned[r.owner(key)]++;
            assertThat(r.rank(key).get(0)).isEqualTo(r.owner(key));
        }
        for (int n : owned) {
            assertThat(n).isBetween(KEYS / 4 - KEYS / 40, KEYS / 4 + KEYS / 40);
        }
    }

    @Test
    void aMemberJoiningTakesOnlyTheKeysItNowOwns() {
        Rendezvous four = new Rendezvous(members(4));
        Rendezvous five = new Rendezvous(members(5));
        int moved = 0;
        for (int k = 0; k < KEYS; k++) {
            String key = "k" + k;
            int before = four.owner(key);
            int after = five.owner(key);
            if (before != after) {
                assertThat(after).as("a key that moves, moves to the new member").isEqualTo(4);
                moved++;
            }
        }
        assertThat(moved).isBetween(KEYS / 5 - KEYS / 50, KEYS / 5 + KEYS / 50);
    }

    @Test
    void aMemberLeavingGivesUpOnlyItsOwnKeys_eachToItsSecondChoice() {
        List<String> all = members(4);
        Rendezvous full = new Rendezvous(all);
        List<String> without = new ArrayList<>(all);
        without.remove(2);
        Rendezvous less = new Rendezvous(without);
        for (int k = 0; k < KEYS; k++) {
            String key = "k" + k;
            String before = all.get(full.owner(key));
            String after = without.get(less.owner(key));
            if (!before.equals(all.get(2))) {
                assertThat(after).isEqualTo(before);
            } else {
                assertThat(after).isEqualTo(all.get(full.rank(key).get(1)));
            }
        }
    }
}
