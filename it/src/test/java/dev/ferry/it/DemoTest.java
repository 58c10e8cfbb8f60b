package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ferry demo} in its own process, as the README runs it. */
class DemoTest {
    @TempDir
    Path dir;

    record Epoch(int epoch, double waitP50, long egress, long predicted) {
    }

    static List<Epoch> epochs(String runJson) {
        List<Epoch> out = new ArrayList<>();
        Matcher m = Pattern.compile("\\{\"epoch\":(\\d+),[^}]*?\"wait_per_step_ms_p50\":([0-9.]+),[^}]*?\"egress_bytes\":(\\d+),"
                + "[^}]*?\"predicted_egress_bytes\":(-?\\d+)[,}]").matcher(runJson);
        while (m.find()) {
            out.add(new Epoch(Integer.parseInt(m.group(1)), Double.parseDouble(m.group(2)), Long.parseLong(m.group(3)),
                    Long.parseLong(m.group(4))));
        }
        return out;
    }

    @Test
    void quickDemo_ferryWaitsFarLessThanDirect_andEgressesWhatItPredicted() throws Exception {
        Path log = dir.resolve("demo.log");
        Path report = dir.resolve("r.json");
        Process p = Servers.ferry(log, "demo", "--quick", "--report", report.toString(), "--dir", dir.resolve("data").toString());
        assertThat(p.waitFor(3, TimeUnit.MINUTES)).isTrue();
        String out = Files.readString(log);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("the four numbers, per epoch").contains("advisor, direct:").contains("advisor, ferry:")
                .contains("found: through ferry the accelerator was busy").contains("the accelerator could take");
        String json = Files.readString(report);
        assertThat(json).startsWith("{\"direct\":{\"epochs\":[").contains(",\"ferry\":{\"epochs\":[");
        int split = json.indexOf(",\"ferry\":");
        List<Epoch> direct = epochs(json.substring(0, split));
        List<Epoch> ferry = epochs(json.substring(split));
        assertThat(direct).hasSize(3);
        assertThat(ferry).hasSize(3);
        long[] withHeldRoom = predictions(json, "ferry_predicted_egress_bytes_with_held_room");
        long[] withReadsInFlight = predictions(json, "ferry_predicted_egress_bytes_with_reads_in_flight");
        long[] lru = predictions(json, "ferry_predicted_egress_bytes_lru");
        for (int e = 1; e < 3; e++) {
            // a relation, not a speed: the plain loader waits on the store's first byte every batch, ferry on its disk
            assertThat(ferry.get(e).waitP50()).as("epoch %d wait p50, ferry vs direct; %s", e + 1, out)
                    .isLessThan(direct.get(e).waitP50());
            // the tier is MIN at its capacity plus room for prefetched blocks held for their reads (an eighth of
            // the capacity), less the blocks the loader's 16 reads in flight span (they complete out of plan
            // order, more so on a busy machine), so the epoch lands between MIN with the held room and MIN with
            // the reads in flight taken out, at any machine speed; and a tier that evicted without the plan (LRU)
            // would egress more than that upper bound, so the bound tells the plan's eviction from a blind one
            long egress = ferry.get(e).egress();
            assertThat(withReadsInFlight[e]).as("epoch %d: MIN less the reads in flight, below LRU", e + 1).isLessThan(lru[e]);
            assertThat(egress).as("epoch %d egress: at least MIN with the held room (%d), at most MIN less the reads in flight (%d);"
                    + " MIN at the capacity %d, LRU %d", e + 1, withHeldRoom[e], withReadsInFlight[e], ferry.get(e).predicted(), lru[e])
                    .isBetween((long) (withHeldRoom[e] * 0.95), withReadsInFlight[e]);
        }
    }

    /** The three epochs' figures of the report's array {@code name}. */
    static long[] predictions(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\\[([0-9, ]+)]").matcher(json);
        assertThat(m.find()).as(name + " in " + json).isTrue();
        long[] bytes = Pattern.compile(",\\s*").splitAsStream(m.group(1).trim()).mapToLong(Long::parseLong).toArray();
        assertThat(bytes).hasSize(3);
        return bytes;
    }

    @Test
    void chainTour_runsEndToEnd() throws Exception {
        Path log = dir.resolve("tour.log");
        Process p = Servers.ferry(log, "demo", "chain", "--shards", "4", "--shard-mib", "2", "--sample-seconds", "2",
                "--dir", dir.resolve("store").toString());
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
        String out = Files.readString(log);
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("1. dataset: 4 shards of 2 MiB")
                .contains("one GET per shard").contains("parallel 2 MiB ranged GETs")
                .contains("bare client").contains("governed + retried")
                .contains("the governor keeps")
                .contains("epoch 2").contains("100%").contains("ferry sim, 3 epochs");
    }
}
