package dev.ferry.mount;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.s3client.S3Credentials;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.store.ListRequest;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import dev.ferry.store.chain.MeterSnapshot;
import dev.ferry.store.chain.MeteredStore.Op;
import dev.ferry.time.Await;
import dev.ferry.time.Clock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Small files and folders through a real mount over a real S3 server (the embedded store, s3proxy over a folder,
 * as {@code ferry store} serves it), counting the mount's requests to the store: listings are the metadata (no HEAD
 * per file, one LIST per folder), a listed file costs one GET, a prefix is a folder on direct lookup, the kernel's
 * page cache outlives an unchanged file's reopen, and small or footer-first files are read ahead. Counts, never
 * times: what is fast is the benchmark's to show (scripts/bench-mount-peers).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MountListingTest {
    static final int BLOCK = 1 << 20;
    static final int FOLDERS = 4;
    static final int FILES = 25;

    Path tmp;
    Path data;
    EmbeddedStore store;
    Path mp;
    Mount mount;

    @BeforeAll
    void mountTheStore(@TempDir Path dir) throws IOException {
        Tools.requireFuse();
        tmp = dir;
        data = Files.createDirectories(dir.resolve("store/data"));
        Random random = new Random(27);
        for (int d = 0; d < FOLDERS; d++) {
            Path folder = Files.createDirectories(data.resolve("tree/d" + d));
            for (int f = 0; f < FILES; f++) {
                Files.write(folder.resolve("f" + f + ".bin"), bytes(random, 1 + random.nextInt(40 << 10)));
            }
        }
        // valid/ is listed by the store only as a prefix of dlio/; deep/ keeps dlio/ out of what is listed ahead
        Files.createDirectories(data.resolve("deep/dlio/valid"));
        Files.write(Files.createDirectories(data.resolve("deep/dlio/train")).resolve("a.npz"), bytes(random, 1000));
        Path npz = Files.createDirectories(data.resolve("npz"));
        Files.write(npz.resolve("large.npz"), bytes(random, 12 * BLOCK + 777)); // 13 blocks: more than the read-ahead
        Files.write(npz.resolve("small.npz"), bytes(random, 3 * BLOCK + 555)); // 4 blocks: within the read-ahead
        Files.write(Files.createDirectories(data.resolve("again")).resolve("x.bin"), bytes(random, 50_000));
        Files.write(npz.resolve("sequential.bin"), bytes(random, 8 * BLOCK)); // read in 128 KiB steps
        store = EmbeddedStore.start(dir.resolve("store"), 0, CloudProfile.none());
        mp = Files.createDirectories(dir.resolve("mp"));
        mount = Mount.start(config(mp, "cache", Map.of()), Clock.system(), s -> { });
    }

    static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    MountConfig config(Path mountpoint, String cache, Map<String, String> extra) {
        Map<String, String> s = new HashMap<>(Map.of("mountpoint", mountpoint.toString(), "upstream", store.endpoint().toString(),
                "cache-dir", tmp.resolve(cache).toString(), "block-size", "1MiB", "cache-size", "1GiB", "read-ahead", "4MiB"));
        s.putAll(extra);
        return MountConfig.from(s);
    }

    @AfterAll
    void unmount() throws IOException {
        if (mount != null) {
            mount.close();
        }
        if (store != null) {
            store.close();
        }
    }

    static long delta(MeterSnapshot before, MeterSnapshot after, Op op) {
        return after.requests(op) - before.requests(op);
    }

    /** Runs a Python program with the mount's and the store's folders as argv[1] and argv[2]; its output. */
    String python(Path mountpoint, String program) throws Exception {
        Path script = Files.createTempFile(tmp, "t", ".py");
        Files.writeString(script, "import os, sys, hashlib\nmp, store = sys.argv[1], sys.argv[2]\n" + program);
        return Tools.sh("python3 '" + script + "' '" + mountpoint + "' '" + data.getParent() + "'");
    }

    /**
     * Waits (up to 30 s) until the mount has sent {@code expected} LISTs, for those made ahead, and lists no folder; the
     * count then, final: once the reader is done, only a listing under way can start another.
     */
    static long lists(Mount m, long expected) throws InterruptedException {
        Await.until(expected + " LISTs, and none under way", Duration.ofSeconds(30),
                () -> m.foldersBeingListed() == 0 && m.meter().requests(Op.LIST) >= expected);
        return m.meter().requests(Op.LIST);
    }

    @Test
    void walkAndStatOfATree_listTheTreeInItsPages_aheadOfTheWalker_andSendNoHead() throws Exception {
        Path mp2 = Files.createDirectories(tmp.resolve("mp-walk"));
        try (Mount walking = Mount.start(config(mp2, "cache-walk", Map.of()), Clock.system(), s -> { })) {
            String out = python(mp2, """
                    os.listdir(os.path.join(mp, 'data'))
                    n = 0
                    for _ in range(2):  # the second walk: the folders' kept listings
                        for top, dirs, files in os.walk(os.path.join(mp, 'data/tree')):
                            for f in files:
                                rel = os.path.relpath(os.path.join(top, f), mp)
                                assert os.stat(os.path.join(mp, rel)).st_size == os.stat(os.path.join(store, rel)).st_size, rel
                                n += 1
                    print(n)
                    """);
            assertThat(out.trim()).isEqualTo(Integer.toString(2 * FOLDERS * FILES));
            // data/; then, ahead of the walker, the tree under it (its folders tree/, deep/, npz/, again/ and theirs, at
            // any depth) in one LIST page with no delimiter: the walker's readdirs below data/ find each folder kept
            long expected = 1 + 1;
            assertThat(lists(walking, expected)).as("the top by the walker, the tree under it ahead of it").isEqualTo(expected);
            assertThat(walking.meter().requests(Op.HEAD)).as("sizes come from the listing").isZero();
        }
    }

    @Test
    void aStoreThatCannotBeReached_isSaidAtOnce_whenMounting() throws Exception {
        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort(); // nothing listens there once closed
        }
        Path mp2 = Files.createDirectories(tmp.resolve("mp-unreachable"));
        List<String> said = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Mount m = Mount.start(config(mp2, "cache-unreachable", Map.of("upstream", "http://127.0.0.1:" + closed)), Clock.system(), said::add)) {
            Await.until("a sentence on the store that did not answer", Duration.ofSeconds(30),
                    () -> said.stream().anyMatch(x -> x.contains("did not answer a first request")));
            assertThat(said).anyMatch(x -> x.startsWith("the store at http://127.0.0.1:" + closed + " did not answer"));
        }
        // one that answers is said nothing of
        Path mp3 = Files.createDirectories(tmp.resolve("mp-reachable"));
        List<String> quiet = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Mount m = Mount.start(config(mp3, "cache-reachable", Map.of()), Clock.system(), quiet::add)) {
            assertThat(Tools.sh("ls '" + mp3 + "'").lines()).contains("data");
            assertThat(quiet).noneMatch(x -> x.contains("did not answer"));
        }
    }

    @Test
    void foldersTooLargeToKeep_areNotListedAheadAgain_atTheNextReaddirWithinTheTtl() throws Exception {
        int files = FolderListings.AHEAD_ENTRIES + 1;
        for (String sub : List.of("a", "b")) {
            Path folder = Files.createDirectories(data.getParent().resolve("wide/" + sub)); // a bucket of its own
            for (int i = 0; i < files; i++) {
                Files.write(folder.resolve("f" + i), new byte[] {1});
            }
        }
        Path mp2 = Files.createDirectories(tmp.resolve("mp-wide"));
        try (Mount wide = Mount.start(config(mp2, "cache-wide", Map.of()), Clock.system(), s -> { })) {
            Tools.sh("ls '" + mp2 + "/wide' >/dev/null");
            // the bucket's top for the readdir, then the tree under it: 4,002 keys, 5 pages, neither folder kept
            long first = lists(wide, 1 + 5);
            assertThat(first).isEqualTo(1 + 5);
            Tools.sh("ls '" + mp2 + "/wide' >/dev/null");
            // what a readdir lists ahead is claimed before the readdir answers: lists() waits for any of it to finish
            assertThat(lists(wide, first)).as("wide/ kept, its folders known too large: nothing listed again").isEqualTo(first);
        }
    }

    @Test
    void coldReadsOfListedFiles_costOneGetEach_andNoHead() throws Exception {
        Tools.sh("find '" + mp + "/data/tree' >/dev/null");
        MeterSnapshot before = mount.meter();
        String out = python(mp, """
                from concurrent.futures import ThreadPoolExecutor
                paths = [os.path.join(top, f) for top, _, fs in os.walk(os.path.join(store, 'data/tree')) for f in fs]
                def same(p):
                    with open(p, 'rb') as a, open(os.path.join(mp, os.path.relpath(p, store)), 'rb') as b:
                        return a.read() == b.read()
                with ThreadPoolExecutor(8) as pool:
                    print(sum(pool.map(same, paths)))
                """);
        MeterSnapshot after = mount.meter();
        assertThat(out.trim()).as("files read through the mount equal to the store's").isEqualTo(Integer.toString(FOLDERS * FILES));
        assertThat(delta(before, after, Op.HEAD)).as("the listing's ETag is the version read").isZero();
        assertThat(delta(before, after, Op.GET)).as("one GET per small file").isEqualTo(FOLDERS * FILES);
    }

    @Test
    void filesOpenedByPath_inFoldersNeverListed_costOneListPerFolder_andNoHead() throws Exception {
        Path mp2 = Files.createDirectories(tmp.resolve("mp-paths"));
        try (Mount paths = Mount.start(config(mp2, "cache-paths", Map.of()), Clock.system(), s -> { })) {
            // what a DataLoader over a file of names does: open each path, never list a folder
            String out = python(mp2, """
                    from concurrent.futures import ThreadPoolExecutor
                    rels = [f'data/tree/d{d}/f{f}.bin' for d in (1, 2) for f in range(%d)]
                    def same(rel):
                        with open(os.path.join(mp, rel), 'rb') as a, open(os.path.join(store, rel), 'rb') as b:
                            return a.read() == b.read()
                    with ThreadPoolExecutor(8) as pool:
                        print(sum(pool.map(same, rels)), os.path.exists(os.path.join(mp, 'data/tree/d1/missing.bin')))
                    """.formatted(FILES));
            assertThat(out.trim()).isEqualTo(2 * FILES + " False");
            MeterSnapshot m = paths.meter();
            // a name a listing lacks is asked of the store (it may be new): a GET of its first block (404), and a LIST
            // for a folder of that name
            assertThat(m.requests(Op.GET)).as("one GET per small file, one for the missing name").isEqualTo(2 * FILES + 1);
            assertThat(m.requests(Op.HEAD)).as("sizes and ETags from the folders' listings").isZero();
            // the bucket's top (to find tree), tree/ (d1, d2), d1/ and d2/, each at its first lookup; then missing.bin/;
            // and d1/ and d2/ once more, by the local tier at their 4th miss, to read them ahead (FolderReadAhead lists a
            // folder itself: the mount's listing of it is not handed to the tier)
            assertThat(m.requests(Op.LIST)).as("each folder listed once, the missing name as a folder, two read ahead").isEqualTo(5 + 2);

            // a writer adding files to a folder: each create asks the store of its new name, and does not list the
            // folder again (each write drops the folder's listing)
            python(mp2, """
                    for i in range(10):
                        with open(os.path.join(mp, f'data/deep/dlio/train/new{i}.bin'), 'wb') as f:
                            f.write(b'x' * 1000)
                    """);
            MeterSnapshot w = paths.meter();
            // deep/, dlio/ and train/ listed at their first lookups; then per create one request for the new name (a
            // GET of its first block: 404) and a LIST for a folder of that name (the creates' lookups do not list
            // train/ again after each write drops it)
            assertThat(delta(m, w, Op.GET)).as("one request per new name").isEqualTo(10);
            assertThat(delta(m, w, Op.HEAD)).isZero();
            assertThat(delta(m, w, Op.LIST)).as("3 folders, then one LIST per new name, none of its folder again").isEqualTo(3 + 10);
        }
    }

    @Test
    void filesOpenedByPath_inAFolderTooLargeForALookupToWaitFor_costOneGetEach_andTheFolderIsListedForTheRest() throws Exception {
        int files = FolderListings.AHEAD_ENTRIES + ListRequest.DEFAULT_MAX_KEYS + 1; // a lookup waits for 3 pages at most
        Path folder = Files.createDirectories(data.getParent().resolve("flat/s")); // a bucket of its own, one folder in it
        Random random = new Random(50);
        for (int i = 0; i < files; i++) {
            Files.write(folder.resolve("s" + i + ".bin"), bytes(random, 1 + random.nextInt(20 << 10)));
        }
        Path mp2 = Files.createDirectories(tmp.resolve("mp-flat"));
        try (Mount flat = Mount.start(config(mp2, "cache-flat", Map.of()), Clock.system(), s -> { })) {
            assertThat(flat.config().readOnly()).isFalse();
            // an ls of the bucket first: s/ is listed ahead of it, found too large to keep, and not listed ahead again;
            // lookups in it still list it for themselves
            Tools.sh("ls '" + mp2 + "/flat' >/dev/null");
            lists(flat, 1);
            // a DataLoader over a file of names in one folder of 3,001 (more than a lookup waits to list): each file
            // looked up, opened and read by path
            String out = python(mp2, """
                    import random
                    from concurrent.futures import ThreadPoolExecutor
                    rels = [f'flat/s/s{i}.bin' for i in random.Random(1).sample(range(%d), 60)]
                    def same(rel):
                        st = os.stat(os.path.join(mp, rel))
                        with open(os.path.join(mp, rel), 'rb') as a, open(os.path.join(store, rel), 'rb') as b:
                            theirs = b.read()
                            return a.read() == theirs and st.st_size == len(theirs)
                    with ThreadPoolExecutor(4) as pool:
                        print(sum(pool.map(same, rels)))
                    """.formatted(files));
            assertThat(out.trim()).as("files read through the mount equal to the store's").isEqualTo("60");
            MeterSnapshot m = flat.meter();
            // a lookup the folder's listing has not reached yet is one GET of the file, whose read then finds it in
            // the tier; one the listing answered costs its read's GET: one GET a file either way (the folder
            // read-ahead may fetch others of its files too, never one twice), and no HEAD
            assertThat(m.requests(Op.HEAD)).as("no HEAD before a GET").isZero();
            assertThat(m.requests(Op.GET)).as("one GET per file read, at least").isBetween(60L, (long) files);

            // the folder was listed whole in the background: the rest of it is looked up with no request
            lists(flat, 4);
            MeterSnapshot before = flat.meter();
            String sizes = python(mp2, """
                    print(sum(os.stat(os.path.join(mp, f'flat/s/s{i}.bin')).st_size
                              == os.stat(os.path.join(store, f'flat/s/s{i}.bin')).st_size for i in range(%d, %d)))
                    """.formatted(files - 100, files));
            assertThat(sizes.trim()).isEqualTo("100");
            MeterSnapshot after = flat.meter();
            // (a LIST may still come: the local tier's folder read-ahead lists the folder itself, at its 4th miss)
            assertThat(delta(before, after, Op.GET) + delta(before, after, Op.HEAD)).as("100 more files stat'ed from the folder's listing")
                    .isZero();
        }
    }

    @Test
    void aPrefixWithNothingUnderIt_isAFolderOnDirectLookup_withoutListingItsParent() throws Exception {
        String out = python(mp, """
                d = os.path.join(mp, 'data/deep/dlio/valid')
                print(os.path.isdir(d), os.listdir(d), os.path.exists(os.path.join(mp, 'data/deep/dlio/vali')))
                os.makedirs(d, exist_ok=True)  # what DLIO does; it crashed on ENOENT
                print(os.path.isfile(os.path.join(mp, 'data/deep/dlio/train/a.npz')))
                """);
        assertThat(out).isEqualTo("True [] False\nTrue\n");
    }

    @Test
    void reopeningAnUnchangedFile_keepsTheKernelsPages_evenAfterTheMetadataTtl_andAChangedOneDropsThem() throws Exception {
        Path mp2 = Files.createDirectories(tmp.resolve("mp-ttl"));
        try (Mount short1 = Mount.start(config(mp2, "cache-ttl", Map.of("metadata-ttl", "1s")), Clock.system(), s -> { })) {
            Path file = mp2.resolve("data/again/x.bin");
            Tools.sh("ls '" + mp2 + "/data' '" + mp2 + "/data/again' >/dev/null");
            assertThat(Files.readAllBytes(file)).isEqualTo(Files.readAllBytes(data.resolve("again/x.bin")));
            long reads = short1.fileReads();
            assertThat(Files.readAllBytes(file)).isEqualTo(Files.readAllBytes(data.resolve("again/x.bin")));
            assertThat(short1.fileReads()).as("reopened within the TTL: the page cache answers").isEqualTo(reads);

            // past the metadata TTL (and the kernel's attribute timeout, the same, in real time): a stat asks the mount,
            // which lists the folder again
            MeterSnapshot before = short1.meter();
            Await.until("the folder listed again past the metadata TTL", Duration.ofSeconds(30), () -> {
                Files.size(file);
                return short1.meter().requests(Op.LIST) > before.requests(Op.LIST);
            });
            assertThat(Files.readAllBytes(file)).isEqualTo(Files.readAllBytes(data.resolve("again/x.bin")));
            assertThat(short1.fileReads()).as("reopened after the TTL, same ETag: the page cache still answers").isEqualTo(reads);
            assertThat(delta(before, short1.meter(), Op.HEAD)).as("revalidated by listing the folder again").isZero();

            byte[] replaced = bytes(new Random(9), 70_000);
            try (S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(store.endpoint(), S3Credentials.PLACEHOLDER))) {
                s3.put(ObjectKey.of("data", "again/x.bin"), PutBody.ofBytes(replaced));
            }
            Await.until("the new version, whole, through the mount", Duration.ofSeconds(30),
                    () -> Arrays.equals(Files.readAllBytes(file), replaced));
            assertThat(short1.fileReads()).as("a new ETag: the kernel's pages of the old one are dropped").isGreaterThan(reads);
        }
    }

    @Test
    void aReadOnlyMount_isSentOneOpenInAll_andAVersionOfTheSameSecondAndSize_stillDropsTheKernelsPages() throws Exception {
        Path mp2 = Files.createDirectories(tmp.resolve("mp-ro"));
        try (Mount ro = Mount.start(config(mp2, "cache-ro", Map.of("metadata-ttl", "1s", "read-only", "true")), Clock.system(), s -> { })) {
            String readAll = """
                    ok = 0
                    for d in range(4):
                        for f in range(25):
                            rel = 'data/tree/d%d/f%d.bin' % (d, f)
                            ok += open(os.path.join(mp, rel), 'rb').read() == open(os.path.join(store, rel), 'rb').read()
                    print(ok)
                    """;
            MeterSnapshot before = ro.meter();
            python(mp2, "for _ in os.walk(os.path.join(mp, 'data/tree')): pass"); // the kernel learns the files from listings
            assertThat(python(mp2, readAll).trim()).isEqualTo("100");
            assertThat(delta(before, ro.meter(), Op.HEAD)).as("files the listings described: no HEAD").isZero();
            long reads = ro.fileReads();
            assertThat(python(mp2, readAll).trim()).isEqualTo("100");
            // the kernel kept the files' pages: the second pass is answered by it, not by the mount (a page the kernel
            // evicted meanwhile, on a machine short of memory, is read once more: at most a couple of 100)
            assertThat(ro.fileReads() - reads).as("the second pass: the kernel kept the files' pages").isLessThanOrEqualTo(2);
            assertThat(ro.fileOpens()).as("the first open, answered ENOSYS: the kernel opened the other 199 itself").isEqualTo(1);
            assertThat(ro.flushes()).as("the first close, answered ENOSYS: the kernel flushed none of the others").isEqualTo(1);

            // S3 keeps last-modified times in whole seconds: a new version of the same size written within the same
            // second shows the kernel another mtime only through the nanoseconds the mount takes from its ETag
            Random random = new Random(31);
            try (S3ObjectStore s3 = new S3ObjectStore(S3StoreConfig.endpoint(store.endpoint(), S3Credentials.PLACEHOLDER))) {
                for (int attempt = 0; ; attempt++) {
                    assertThat(attempt).as("attempts to write two versions within one second").isLessThan(20);
                    ObjectKey key = ObjectKey.of("data", "versions/v" + attempt + ".bin");
                    Path file = mp2.resolve(key.bucket() + "/" + key.key());
                    byte[] v1 = bytes(random, 60_000);
                    byte[] v2 = bytes(random, 60_000);
                    s3.put(key, PutBody.ofBytes(v1));
                    Instant written1 = s3.head(key).lastModified();
                    assertThat(Files.readAllBytes(file)).isEqualTo(v1); // the kernel now holds v1's pages
                    Instant shown1 = Files.getLastModifiedTime(file).toInstant();
                    s3.put(key, PutBody.ofBytes(v2));
                    if (s3.head(key).lastModified().getEpochSecond() != written1.getEpochSecond()) {
                        continue;
                    }
                    int[] mixed = {0};
                    Await.until("the new version, whole, through the mount", Duration.ofSeconds(30), () -> {
                        byte[] got = Files.readAllBytes(file);
                        if (!Arrays.equals(got, v1) && !Arrays.equals(got, v2)) {
                            mixed[0]++;
                        }
                        return Arrays.equals(got, v2);
                    });
                    assertThat(mixed[0]).as("reads that returned neither version whole").isZero();
                    Instant shown2 = Files.getLastModifiedTime(file).toInstant();
                    assertThat(shown2.getEpochSecond()).as("the same whole second").isEqualTo(shown1.getEpochSecond());
                    assertThat(shown2).as("another mtime for another version").isNotEqualTo(shown1);
                    break;
                }
            }
        }
    }

    @Test
    void closingAFileOpenForReading_sendsNoFlush_whileClosingAWrittenOneDoes() throws Exception {
        Path file = mp.resolve("data/again/flushed.bin");
        byte[] written = bytes(new Random(11), 30_000);
        long before = mount.flushes();
        Files.write(file, written);
        assertThat(mount.flushes()).as("a written file's close is its FLUSH: where the write reaches the store")
                .isGreaterThan(before);

        long written1 = mount.flushes();
        for (int i = 0; i < 5; i++) {
            assertThat(Files.readAllBytes(file)).isEqualTo(written);
        }
        assertThat(mount.flushes()).as("five opens to read and their closes: no FLUSH (noflush)").isEqualTo(written1);
    }

    /** FUSE READs the kernel sends for a reader of {@code data/npz/sequential.bin} through {@code m} (128 KiB at a time). */
    long readsOfASequentialReader(Mount m, Path mountpoint) throws Exception {
        long before = m.fileReads();
        String out = python(mountpoint, """
                with open(os.path.join(mp, 'data/npz/sequential.bin'), 'rb') as f:
                    body = b''.join(iter(lambda: f.read(128 << 10), b''))
                print(body == open(os.path.join(store, 'data/npz/sequential.bin'), 'rb').read())
                """);
        assertThat(out.trim()).isEqualTo("True");
        return m.fileReads() - before;
    }

    @Test
    void aSequentialReader_isReadIn1MiBReads_withTheDefaultKernelReadAhead_in128KiBOnesWithout() throws Exception {
        assertThat(KernelReadAhead.get(mp)).as("the mount's read_ahead_kb, in bytes (--kernel-read-ahead 1MiB)").isEqualTo(BLOCK);
        long wide = readsOfASequentialReader(mount, mp);
        assertThat(wide).as("READs for 8 MiB with the kernel reading ahead 1 MiB at a time").isBetween(8L, 24L);

        Path mp2 = Files.createDirectories(tmp.resolve("mp-narrow"));
        try (Mount narrow = Mount.start(config(mp2, "cache-narrow", Map.of("kernel-read-ahead", "0")), Clock.system(), s -> { })) {
            assertThat(KernelReadAhead.get(mp2)).as("the kernel's own read-ahead for a FUSE mount").isEqualTo(128 << 10);
            assertThat(readsOfASequentialReader(narrow, mp2)).as("READs for 8 MiB in the kernel's 128 KiB steps").isGreaterThanOrEqualTo(64L);
        }
    }

    @Test
    void footerThenBody_ofALargeFile_getsTheReadAhead() throws Exception {
        long ahead = mount.readAheadBlocks();
        String out = python(mp, """
                p = os.path.join(mp, 'data/npz/large.npz')
                with open(p, 'rb') as f:
                    f.seek(-22, 2); tail = f.read(22); f.seek(0)
                    body = b''.join(iter(lambda: f.read(1 << 20), b''))
                print(body == open(os.path.join(store, 'data/npz/large.npz'), 'rb').read() and body[-22:] == tail)
                """);
        assertThat(out.trim()).isEqualTo("True");
        assertThat(mount.readAheadBlocks() - ahead).as("blocks fetched ahead of the body read after the footer").isPositive();
    }

    @Test
    void aSmallFile_isFetchedWholeAtItsFirstRead_oneGetPerBlock() throws Exception {
        Tools.sh("ls '" + mp + "/data/npz' >/dev/null");
        long ahead = mount.readAheadBlocks();
        MeterSnapshot before = mount.meter();
        python(mp, """
                with open(os.path.join(mp, 'data/npz/small.npz'), 'rb') as f:
                    f.seek(-22, 2); f.read(22)
                """);
        assertThat(mount.readAheadBlocks() - ahead).as("the 3 blocks before the footer's, at the footer's read").isEqualTo(3);
        String out = python(mp, """
                print(open(os.path.join(mp, 'data/npz/small.npz'), 'rb').read() == open(os.path.join(store, 'data/npz/small.npz'), 'rb').read())
                """);
        assertThat(out.trim()).isEqualTo("True");
        MeterSnapshot after = mount.meter();
        assertThat(delta(before, after, Op.GET)).as("each block once").isEqualTo(4);
        assertThat(delta(before, after, Op.HEAD)).isZero();
    }
}
