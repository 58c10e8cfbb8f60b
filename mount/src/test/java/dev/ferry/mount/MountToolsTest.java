package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.store.chain.MeteredStore;
import dev.ferry.time.Await;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real mount (libfuse3, /dev/fuse) over a folder store, driven by real tools (cat, cp, sha256sum, find, dd,
 * stat, python3), compared byte for byte with the store's files. Fails, rather than skips, without FUSE when
 * FERRY_REQUIRE_REAL_CLIENTS=1 (scripts/test).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MountToolsTest {
    static final int BLOCK = 1 << 20;

    Path tmp;
    Path store;
    Path mp;
    Mount mount;
    byte[] big;

    @BeforeAll
    void mountAFolderStore(@TempDir Path dir) throws IOException {
        Tools.requireFuse();
        tmp = dir;
        store = Files.createDirectories(tmp.resolve("store"));
        Path data = Files.createDirectories(store.resolve("data"));
        big = new byte[24 * BLOCK + 12_345];
        new Random(7).nextBytes(big);
        Files.write(data.resolve("big.bin"), big);
        Files.createDirectories(data.resolve("a/b"));
        Files.writeString(data.resolve("a/b/c.txt"), "hello\n");
        Path many = Files.createDirectories(data.resolve("many"));
        for (int i = 0; i < 2_500; i++) {
            Files.writeString(many.resolve(String.format("f%05d", i)), "file " + i);
        }
        Files.createDirectories(store.resolve("other"));
        mp = Files.createDirectories(tmp.resolve("mp"));
        mount = Mount.start(config(mp, "cache", Map.of("metadata-ttl", "0")), Clock.system(), s -> { });
    }

    MountConfig config(Path mountpoint, String cache, Map<String, String> extra) {
        Map<String, String> s = new HashMap<>(Map.of("mountpoint", mountpoint.toString(), "store-root", store.toString(),
                "cache-dir", tmp.resolve(cache).toString(), "block-size", "1MiB", "cache-size", "1GiB", "read-ahead", "8MiB"));
        s.putAll(extra);
        return MountConfig.from(s);
    }

    @AfterAll
    void unmount() throws IOException {
        if (mount != null) {
            mount.close();
            assertThat(FuseCheck.isMounted(mp)).as("unmounted at close").isFalse();
        }
    }

    @Test
    void catAndSha256sum_matchTheStore() throws Exception {
        assertThat(Tools.sh("cat '" + mp + "/data/big.bin' | sha256sum | cut -d' ' -f1").trim()).isEqualTo(sha256(big));
        assertThat(Tools.sh("sha256sum '" + mp + "/data/big.bin' | cut -d' ' -f1").trim()).isEqualTo(sha256(big));
        assertThat(Tools.sh("cat '" + mp + "/data/a/b/c.txt'")).isEqualTo("hello\n");
    }

    @Test
    void cp_copiesEveryByte() throws Exception {
        Path copy = tmp.resolve("copy.bin");
        Tools.sh("cp '" + mp + "/data/big.bin' '" + copy + "'");
        assertThat(Files.readAllBytes(copy)).isEqualTo(big);
    }

    @Test
    void ddAtOffsets_readsTheStoresBytes() throws Exception {
        // within a block, across a block boundary, the tail and past the end
        long[][] cases = {{0, 4096, 3}, {BLOCK - 4096, 4096, 2}, {7 * BLOCK + 100, 1, 5000}, {big.length - 45, 1, 100}};
        for (long[] c : cases) {
            long offset = c[0];
            long bs = c[1];
            long count = c[2];
            String out = Tools.sh("dd if='" + mp + "/data/big.bin' bs=" + bs + " skip=" + (offset / bs) + " count=" + count
                    + " status=none | sha256sum | cut -d' ' -f1").trim();
            int from = (int) offset;
            int to = (int) Math.min(big.length, offset + bs * count);
            assertThat(out).as("dd at %d", offset).isEqualTo(sha256(java.util.Arrays.copyOfRange(big, from, to)));
        }
        assertThat(Tools.sh("dd if='" + mp + "/data/big.bin' bs=1M skip=100 count=1 status=none | wc -c").trim()).isEqualTo("0");
    }

    @Test
    void pythonSeekAndRead_matchTheStore() throws Exception {
        String script = String.join("\n",
                "import hashlib, os, random, sys",
                "path = sys.argv[1]",
                "r = random.Random(11)",
                "h = hashlib.sha256()",
                "with open(path, 'rb') as f:",
                "    size = os.fstat(f.fileno()).st_size",
                "    for _ in range(200):",
                "        off = r.randrange(size); n = r.randrange(1, 300000)",
                "        f.seek(off); h.update(f.read(n))",
                "        h.update(os.pread(f.fileno(), 777, (off * 7) % size))",
                "print(size, h.hexdigest())");
        Path py = Files.writeString(tmp.resolve("seek.py"), script);
        String got = Tools.sh("python3 '" + py + "' '" + mp + "/data/big.bin'").trim();
        // the same script over the store's own file: the same offsets, so the same digest if every byte matches
        String expected = Tools.sh("python3 '" + py + "' '" + store + "/data/big.bin'").trim();
        assertThat(got).isEqualTo(expected).startsWith(big.length + " ");
    }

    @Test
    void pytorchDataset_overFilesInTheMount_yieldsTheStoresBytes() throws Exception {
        Tools.requirePythonModule("torch");
        Path dir = Files.createDirectories(store.resolve("data/samples"));
        Random random = new Random(9);
        for (int i = 0; i < 40; i++) {
            byte[] b = new byte[1 + random.nextInt(3 * BLOCK / 2)];
            random.nextBytes(b);
            Files.write(dir.resolve(String.format("s%03d.bin", i)), b);
        }
        String script = String.join("\n",
                "import os, sys, torch",
                "from torch.utils.data import DataLoader, Dataset",
                "mounted, stored = sys.argv[1], sys.argv[2]",
                "class Files(Dataset):",
                "    def __init__(self, root):",
                "        self.root, self.names = root, sorted(os.listdir(root))",
                "    def __len__(self):",
                "        return len(self.names)",
                "    def __getitem__(self, i):",
                "        with open(os.path.join(self.root, self.names[i]), 'rb') as f:",
                "            return self.names[i], torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)",
                "if __name__ == '__main__':",
                "    loader = DataLoader(Files(mounted), batch_size=None, shuffle=True, num_workers=2,",
                "                        generator=torch.Generator().manual_seed(1))",
                "    seen = set()",
                "    for name, tensor in loader:",
                "        with open(os.path.join(stored, name), 'rb') as f:",
                "            if tensor.numpy().tobytes() != f.read():",
                "                sys.exit(name + ' differs from the store')",
                "        seen.add(name)",
                "    print(len(seen))");
        Path py = Files.writeString(tmp.resolve("dataset.py"), script);
        assertThat(Tools.sh("python3 '" + py + "' '" + mp + "/data/samples' '" + dir + "'").trim()).isEqualTo("40");
    }

    @Test
    void findAndLs_listEveryKey_readingTheListingInPages() throws Exception {
        long listsBefore = mount.meter().requests().getOrDefault(MeteredStore.Op.LIST, 0L);
        Set<String> listed = new TreeSet<>(Tools.sh("cd '" + mp + "' && find data -type f").lines().toList());
        Set<String> expected;
        try (Stream<Path> s = Files.walk(store.resolve("data"))) {
            expected = s.filter(Files::isRegularFile).map(p -> store.relativize(p).toString()).collect(Collectors.toCollection(TreeSet::new));
        }
        assertThat(listed).isEqualTo(expected).hasSizeGreaterThan(2_500);
        long lists = mount.meter().requests().getOrDefault(MeteredStore.Op.LIST, 0L) - listsBefore;
        assertThat(lists).as("2,500 keys are 3 pages of 1,000").isGreaterThanOrEqualTo(3);
        assertThat(Tools.sh("ls '" + mp + "/data/many' | wc -l").trim()).isEqualTo("2500");
        assertThat(Tools.sh("ls '" + mp + "'").lines().toList()).containsExactly("data", "other");
        assertThat(Tools.sh("stat -c %s '" + mp + "/data/big.bin'").trim()).isEqualTo(Integer.toString(big.length));
        assertThat(Tools.run("stat", mp + "/data/nope").exitCode()).isNotZero();
    }

    @Test
    void sequentialRead_fetchesTheNextBlocksAhead() throws Exception {
        Path f = store.resolve("data/seq.bin");
        byte[] bytes = new byte[20 * BLOCK];
        new Random(3).nextBytes(bytes);
        Files.write(f, bytes);
        long before = mount.stack().cache().stats().prefetchedBlocks();
        // 2 MiB sequentially: without read-ahead only those 2 blocks would be fetched
        assertThat(Tools.sh("dd if='" + mp + "/data/seq.bin' bs=128k count=16 status=none | wc -c").trim()).isEqualTo(Integer.toString(2 * BLOCK));
        Await.until("4 blocks fetched ahead of the reader", Duration.ofSeconds(30),
                () -> mount.stack().cache().stats().prefetchedBlocks() - before >= 4);
        assertThat(mount.readAheadBlocks()).isPositive();
    }

    @Test
    void openFile_keepsItsVersion_whileANewOpenSeesTheReplacement() throws Exception {
        Path f = store.resolve("data/versioned.bin");
        byte[] v1 = new byte[3 * BLOCK];
        byte[] v2 = new byte[3 * BLOCK];
        new Random(1).nextBytes(v1);
        new Random(2).nextBytes(v2);
        Files.write(f, v1);
        String script = String.join("\n",
                "import hashlib, os, sys, time",
                "path, store, v2 = sys.argv[1], sys.argv[2], sys.argv[3]",
                "with open(path, 'rb') as f:",
                "    a = hashlib.sha256(f.read()).hexdigest()",
                "    time.sleep(1.1)  # a new mtime for the replacement",
                "    with open(v2, 'rb') as src, open(store + '.tmp', 'wb') as dst: dst.write(src.read())",
                "    os.replace(store + '.tmp', store)",
                "    with open(path, 'rb') as g: new = hashlib.sha256(g.read()).hexdigest()",
                "    # drop the kernel's pages of the old version: its bytes must now come from the local tier",
                "    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)",
                "    f.seek(0); old = hashlib.sha256(f.read()).hexdigest()",
                "print(a, old, new)");
        Path py = Files.writeString(tmp.resolve("pin.py"), script);
        Path v2file = Files.write(tmp.resolve("v2.bin"), v2);
        String[] out = Tools.sh("python3 '" + py + "' '" + mp + "/data/versioned.bin' '" + f + "' '" + v2file + "'").trim().split(" ");
        assertThat(out[0]).as("first read").isEqualTo(sha256(v1));
        assertThat(out[1]).as("the handle opened before the replacement").isEqualTo(sha256(v1));
        assertThat(out[2]).as("a new open").isEqualTo(sha256(v2));
        assertThat(Tools.sh("sha256sum '" + mp + "/data/versioned.bin' | cut -d' ' -f1").trim()).isEqualTo(sha256(v2));
    }

    @Test
    void writtenFiles_reachTheStore_throughWriteBack() throws Exception {
        Path src = tmp.resolve("ckpt.bin");
        byte[] ckpt = new byte[5 * BLOCK + 17];
        new Random(5).nextBytes(ckpt);
        Files.write(src, ckpt);
        Tools.sh("mkdir -p '" + mp + "/data/ckpt/step1' && cp '" + src + "' '" + mp + "/data/ckpt/step1/model.pt'");
        String py = "import os,sys\nwith open(sys.argv[1], 'wb') as f:\n    f.write(b'x' * 100000); f.flush(); os.fsync(f.fileno())\n";
        Tools.sh("python3 -c \"$(printf '%s' '" + py.replace("'", "'\\''") + "')\" '" + mp + "/data/ckpt/step1/opt.pt'");
        assertThat(mount.stack().writeBack().flush(Duration.ofSeconds(30)).complete()).isTrue();
        assertThat(Files.readAllBytes(store.resolve("data/ckpt/step1/model.pt"))).isEqualTo(ckpt);
        assertThat(Files.readAllBytes(store.resolve("data/ckpt/step1/opt.pt"))).isEqualTo("x".repeat(100000).getBytes(StandardCharsets.US_ASCII));
        assertThat(Tools.sh("sha256sum '" + mp + "/data/ckpt/step1/model.pt' | cut -d' ' -f1").trim()).isEqualTo(sha256(ckpt));
    }

    @Test
    void inPlaceOverwrite_rewritesTheWholeObject() throws Exception {
        Files.writeString(store.resolve("data/edit.txt"), "abcdef");
        Tools.sh("python3 -c \"f=open('" + mp + "/data/edit.txt','r+b'); f.seek(2); f.write(b'ZZ'); f.close()\"");
        assertThat(mount.stack().writeBack().flush(Duration.ofSeconds(30)).complete()).isTrue();
        assertThat(Files.readString(store.resolve("data/edit.txt"))).isEqualTo("abZZef");
        Tools.sh("echo -n new > '" + mp + "/data/edit.txt'"); // O_TRUNC: a whole replacement
        assertThat(mount.stack().writeBack().flush(Duration.ofSeconds(30)).complete()).isTrue();
        assertThat(Files.readString(store.resolve("data/edit.txt"))).isEqualTo("new");
    }

    @Test
    void rename_movesAFile_refusesAFolderWithEXDEV_andRmDeletes() throws Exception {
        Files.createDirectories(store.resolve("data/mv"));
        Files.writeString(store.resolve("data/mv/a.txt"), "moved");
        String py = String.join("\n",
                "import os, errno, sys",
                "d = sys.argv[1]",
                "os.rename(d + '/mv/a.txt', d + '/mv/b.txt')",
                "try:",
                "    os.rename(d + '/mv', d + '/mv2'); print('renamed')",
                "except OSError as e:",
                "    print(errno.errorcode[e.errno])");
        Path script = Files.writeString(tmp.resolve("mv.py"), py);
        assertThat(Tools.sh("python3 '" + script + "' '" + mp + "/data'").trim()).isEqualTo("EXDEV");
        assertThat(mount.stack().writeBack().flush(Duration.ofSeconds(30)).complete()).isTrue();
        assertThat(Files.readString(store.resolve("data/mv/b.txt"))).isEqualTo("moved");
        assertThat(store.resolve("data/mv/a.txt")).doesNotExist();
        Tools.sh("rm '" + mp + "/data/mv/b.txt'");
        assertThat(store.resolve("data/mv/b.txt")).doesNotExist();
    }

    @Test
    void writeThroughMount_uploadsBeforeCloseReturns() throws Exception {
        Path mp2 = Files.createDirectories(tmp.resolve("mp-wt"));
        try (Mount wt = Mount.start(config(mp2, "cache-wt", Map.of("write-through", "true")), Clock.system(), s -> { })) {
            assertThat(wt.stack().writeBack()).isNull();
            Tools.sh("head -c 3000000 /dev/urandom > '" + tmp + "/wt.bin' && cp '" + tmp + "/wt.bin' '" + mp2 + "/other/wt.bin'");
            // no flush: cp's close returned after the upload
            assertThat(Files.readAllBytes(store.resolve("other/wt.bin"))).isEqualTo(Files.readAllBytes(tmp.resolve("wt.bin")));
        }
        assertThat(FuseCheck.isMounted(mp2)).isFalse();
    }

    @Test
    void readOnlyMount_refusesWritesWithEROFS() throws Exception {
        Path mp3 = Files.createDirectories(tmp.resolve("mp-ro"));
        try (Mount ro = Mount.start(config(mp3, "cache-ro", Map.of("read-only", "true")), Clock.system(), s -> { })) {
            Tools.Result r = Tools.run("bash", "-c", "echo x > '" + mp3 + "/data/ro.txt'");
            assertThat(r.exitCode()).isNotZero();
            assertThat(r.output()).contains("Read-only file system");
            assertThat(Tools.run("rm", mp3 + "/data/a/b/c.txt").output()).contains("Read-only file system");
            assertThat(Tools.sh("cat '" + mp3 + "/data/a/b/c.txt'")).isEqualTo("hello\n");
        }
        assertThat(store.resolve("data/ro.txt")).doesNotExist();
        assertThat(store.resolve("data/a/b/c.txt")).exists();
    }

    @Test
    void sigterm_unmounts_andAKilledMountIsClearedByTheNext() throws Exception {
        Path mp4 = Files.createDirectories(tmp.resolve("mp-proc"));
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), MountMain.class.getName(), mp4.toString(), "--store-root", store.toString(),
                "--cache-dir", tmp.resolve("cache-proc").toString());
        Process p = Tools.startMount(cmd, mp4);
        assertThat(Tools.sh("cat '" + mp4 + "/data/a/b/c.txt'")).isEqualTo("hello\n");
        p.destroy(); // SIGTERM
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isIn(0, 143);
        assertThat(FuseCheck.isMounted(mp4)).as("SIGTERM unmounts").isFalse();

        // unmounted from outside, then SIGTERM while it closes (what scripts do): it still says what the store saw
        Process outside = Tools.startMount(cmd, mp4);
        Path log = mp4.resolveSibling(mp4.getFileName() + ".log");
        Tools.sh("fusermount3 -u '" + mp4 + "'");
        Await.until("the mount seeing its unmount", Duration.ofSeconds(20),
                () -> Files.readString(log).contains("was unmounted from outside"));
        outside.destroy();
        assertThat(outside.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(Files.readString(log)).contains("; the store saw ");

        Process killed = Tools.startMount(cmd, mp4);
        killed.destroyForcibly(); // SIGKILL: the mount stays, its connection gone
        killed.waitFor(20, TimeUnit.SECONDS);
        assertThat(FuseCheck.isMounted(mp4)).as("a killed mount leaves a stale mountpoint").isTrue();
        StringBuilder notes = new StringBuilder();
        try (Mount next = Mount.start(config(mp4, "cache-proc2", Map.of()), Clock.system(), notes::append)) {
            assertThat(notes.toString()).contains("stale").contains("fusermount3 -u -z");
            assertThat(Tools.sh("cat '" + mp4 + "/data/a/b/c.txt'")).isEqualTo("hello\n");
        }
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }
}
