package dev.ferry.serve.s3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ferry.serve.DaemonFixture;
import dev.ferry.time.Await;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.ListObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Issue 20, item 6: a listing shows what was acknowledged. Under write-back, writes not uploaded yet are merged
 * into ListObjectsV2, ListObjects and ListObjectVersions by name, deletes waiting behind them hide their keys,
 * across prefixes, delimiters, start-after, markers, continuation tokens and max-keys; and a delimiter the store
 * refuses is answered as S3 answers it, with or without write-back. AWS SDK for Java v2 and boto3 (against
 * moto as the reference S3) on real daemons.
 */
class WriteBackListingTest {
    private static void flush(DaemonFixture ferry) throws Exception {
        WriteBackSafetyTest.flush(ferry);
    }

    /** S3's answer for {@code state}: each name after {@code after}, an object as "key=size", a common prefix as is. */
    static List<String> expected(TreeMap<String, Long> state, String prefix, String delimiter, String after) {
        TreeMap<String, String> names = new TreeMap<>();
        for (Map.Entry<String, Long> e : state.entrySet()) {
            String key = e.getKey();
            if (!key.startsWith(prefix)) {
                continue;
            }
            int d = delimiter == null ? -1 : key.indexOf(delimiter, prefix.length());
            String name = d < 0 ? key : key.substring(0, d + delimiter.length());
            if (after == null || name.compareTo(after) > 0) {
                names.put(name, d < 0 ? key + "=" + e.getValue() : name);
            }
        }
        return new ArrayList<>(names.values());
    }

    /** Every page of a ListObjectsV2 of {@code maxKeys}, as {@link #expected} writes them, in the order listed. */
    static List<String> listV2(S3Client s3, String prefix, String delimiter, String startAfter, int maxKeys) {
        List<String> got = new ArrayList<>();
        String token = null;
        do {
            String t = token;
            ListObjectsV2Response page = s3.listObjectsV2(b -> b.bucket("data").prefix(prefix).delimiter(delimiter).startAfter(startAfter)
                    .maxKeys(maxKeys).continuationToken(t));
            assertThat(page.keyCount()).isLessThanOrEqualTo(maxKeys);
            assertThat(page.keyCount()).isEqualTo(page.contents().size() + page.commonPrefixes().size());
            TreeMap<String, String> onPage = new TreeMap<>();
            page.contents().forEach(o -> onPage.put(o.key(), o.key() + "=" + o.size()));
            page.commonPrefixes().forEach(p -> onPage.put(p.prefix(), p.prefix()));
            got.addAll(onPage.values());
            token = page.isTruncated() ? page.nextContinuationToken() : null;
            assertThat(page.isTruncated() ? page.keyCount() : maxKeys).as("a truncated page is full").isEqualTo(maxKeys);
        } while (token != null);
        return got;
    }

    /** The same with ListObjects (v1), resuming at NextMarker. */
    static List<String> listV1(S3Client s3, String prefix, String delimiter, int maxKeys) {
        List<String> got = new ArrayList<>();
        String marker = null;
        do {
            String m = marker;
            ListObjectsResponse page = s3.listObjects(b -> b.bucket("data").prefix(prefix).delimiter(delimiter).marker(m).maxKeys(maxKeys));
            TreeMap<String, String> onPage = new TreeMap<>();
            page.contents().forEach(o -> onPage.put(o.key(), o.key() + "=" + o.size()));
            page.commonPrefixes().forEach(p -> onPage.put(p.prefix(), p.prefix()));
            got.addAll(onPage.values());
            marker = page.isTruncated() ? page.nextMarker() : null;
        } while (marker != null);
        return got;
    }

    private static void assertListings(S3Client s3, TreeMap<String, Long> state) {
        String[][] shapes = {{"", null}, {"", "/"}, {"k", null}, {"a/", "/"}, {"", "k"}, {"only", "/"}, {"k1", "1"}};
        for (String[] shape : shapes) {
            for (int maxKeys : new int[] {1, 3, 1000}) {
                assertThat(listV2(s3, shape[0], shape[1], null, maxKeys)).as("v2 prefix '%s' delimiter '%s' max-keys %d", shape[0], shape[1], maxKeys)
                        .isEqualTo(expected(state, shape[0], shape[1], null));
            }
            assertThat(listV1(s3, shape[0], shape[1], 2)).as("v1 prefix '%s' delimiter '%s'", shape[0], shape[1])
                    .isEqualTo(expected(state, shape[0], shape[1], null));
        }
        for (String after : new String[] {"k05", "c", "k19", "zzz"}) {
            assertThat(listV2(s3, "", null, after, 2)).as("start-after %s", after).isEqualTo(expected(state, "", null, after));
            assertThat(listV2(s3, "", "/", after, 3)).as("start-after %s, delimiter", after).isEqualTo(expected(state, "", "/", after));
        }
        List<String> versions = new ArrayList<>();
        s3.listObjectVersions(b -> b.bucket("data")).versions().forEach(v -> versions.add(v.key() + "=" + v.size()));
        assertThat(versions).isEqualTo(expected(state, "", null, null));
    }

    private static byte[] bytes(long size, int seed) {
        return WriteBackSafetyTest.random((int) size, seed);
    }

    private static void put(S3Client s3, TreeMap<String, Long> state, String key, long size) {
        s3.putObject(b -> b.bucket("data").key(key), RequestBody.fromBytes(bytes(size, key.hashCode())));
        state.put(key, size);
    }

    @Test
    void listing_showsAcknowledgedWritesAndHidesPendingDeletes_whileUploadsWait_acrossEveryPaging(@TempDir Path dir) throws Exception {
        TreeMap<String, Long> state = new TreeMap<>();
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b")) {
            for (String key : List.of("a/1", "a/2", "b/x/1", "only/a", "top")) {
                put(s3, state, key, 3 + key.length());
            }
            for (int i = 0; i < 20; i += 2) {
                put(s3, state, String.format("k%02d", i), i);
            }
            flush(ferry);

            // the store cannot take a write now (its staging folder is a file): uploads wait and retry, listings still work
            Path staging = ferry.root.resolve(".ferry-tmp");
            Files.delete(staging);
            Files.writeString(staging, "not a folder");

            for (int i = 1; i < 20; i += 2) {
                put(s3, state, String.format("k%02d", i), 100 + i);
            }
            put(s3, state, "k04", 444); // over a key the store holds
            put(s3, state, "a/3", 33); // under a prefix the store has
            put(s3, state, "c/new", 9); // a prefix only pending writes have
            put(s3, state, "k08", 888);
            assertThat(s3.deleteObject(b -> b.bucket("data").key("k08")).sdkHttpResponse().firstMatchingHeader("x-ferry-durability"))
                    .as("the store still holds k08: hidden until the delete is made").hasValue("local");
            state.remove("k08");
            s3.deleteObject(b -> b.bucket("data").key("k11")); // written, never uploaded, deleted
            state.remove("k11");
            put(s3, state, "only/a", 1);
            s3.deleteObject(b -> b.bucket("data").key("only/a")); // the store's only key under only/: the prefix goes
            state.remove("only/a");
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("m/big")).uploadId();
            List<CompletedPart> parts = new ArrayList<>();
            for (int p = 1; p <= 2; p++) {
                int n = p;
                String etag = s3.uploadPart(b -> b.bucket("data").key("m/big").uploadId(id).partNumber(n),
                        RequestBody.fromBytes(bytes(n == 1 ? 5 << 20 : 1000, n))).eTag();
                parts.add(CompletedPart.builder().partNumber(n).eTag(etag).build());
            }
            String bigEtag = s3.completeMultipartUpload(b -> b.bucket("data").key("m/big").uploadId(id).multipartUpload(m -> m.parts(parts))).eTag();
            state.put("m/big", (5L << 20) + 1000);

            assertThat(ferry.daemon.node().stack().writeBack().stats().pendingObjects()).as("still waiting").isGreaterThan(10);
            assertListings(s3, state);
            List<S3Object> listed = s3.listObjectsV2(b -> b.bucket("data").prefix("k04")).contents();
            assertThat(listed).extracting(S3Object::eTag).containsExactly(WriteBackSafetyTest.quoted(WriteBackSafetyTest.md5(bytes(444, "k04".hashCode()))));
            assertThat(s3.listObjectsV2(b -> b.bucket("data").prefix("m/")).contents()).extracting(S3Object::eTag).containsExactly(bigEtag);
            assertThat(s3.listObjectsV2(b -> b.bucket("data").delimiter("/")).commonPrefixes()).extracting(CommonPrefix::prefix)
                    .containsExactly("a/", "b/", "c/", "m/");

            Files.delete(staging);
            Files.createDirectory(staging);
            flush(ferry);
            assertListings(s3, state);
            assertThat(ferry.root.resolve("data/k08")).as("a delete is made after the write it follows").doesNotExist();
            assertThat(ferry.root.resolve("data/k11")).doesNotExist();
            assertThat(ferry.root.resolve("data/only")).doesNotExist();
            assertThat(Files.size(ferry.root.resolve("data/k04"))).isEqualTo(444);
        }
    }

    @Test
    void aWriteBesideAPendingDelete_inAFolderStore_waitsForTheDelete_ratherThanFailingLater(@TempDir Path dir) throws Exception {
        try (DaemonFixture ferry = DaemonFixture.overFolder(dir).with("write-back", "true").start(); S3Client s3 = ferry.sdk("a", "b")) {
            Path staging = ferry.root.resolve(".ferry-tmp");
            Files.delete(staging);
            Files.writeString(staging, "not a folder"); // uploads wait
            assertThat(s3.deleteObject(b -> b.bucket("data").key("top")).sdkHttpResponse().firstMatchingHeader("x-ferry-durability"))
                    .as("nothing pending: deleted in the store").hasValue("durable");
            s3.putObject(b -> b.bucket("data").key("run/ckpt"), RequestBody.fromString("pending"));
            s3.deleteObject(b -> b.bucket("data").key("run/ckpt"));
            // "run" is an object only once "run/ckpt" is gone from the folder: the write waits for the delete
            CompletableFuture<PutObjectResponse> put = CompletableFuture.supplyAsync(
                    () -> s3.putObject(b -> b.bucket("data").key("run"), RequestBody.fromString("a file now")));
            Await.until("the write waiting for the delete", Duration.ofMinutes(1),
                    () -> ferry.daemon.node().stack().writeBack().fencesWaiting() > 0);
            assertThat(put).as("waiting while the delete cannot be made").isNotDone();
            Files.delete(staging);
            Files.createDirectory(staging);
            put.get(1, TimeUnit.MINUTES);
            flush(ferry);
            assertThat(Files.readString(ferry.root.resolve("data/run"))).isEqualTo("a file now");
            assertThat(ferry.daemon.node().stack().writeBack().stats().failed()).isZero();
        }
    }

    @Test
    void listing_rightAfterAcknowledgedPuts_andAMultipartUpload_showsThemAll_inEveryRound(@TempDir Path dir) throws Exception {
        // the embedded store with S3's first-byte latency: uploads lag behind the acknowledgements, as over S3
        try (DaemonFixture ferry = DaemonFixture.overS3(dir).with("write-back", "true").with("profile", "cloud").start();
                S3Client s3 = ferry.sdk("a", "b")) {
            for (int round = 0; round < 3; round++) {
                String prefix = "round" + round + "/";
                for (int i = 0; i < 30; i++) {
                    int n = i;
                    s3.putObject(b -> b.bucket("data").key(prefix + n), RequestBody.fromBytes(new byte[n + 1]));
                }
                List<String> expected = new ArrayList<>();
                for (int i = 0; i < 30; i++) {
                    expected.add(prefix + i + "=" + (i + 1));
                }
                assertThat(withoutUploadsInFlight(s3.listObjectsV2(b -> b.bucket("data").prefix(prefix)).contents()))
                        .as("round %d", round).containsExactlyInAnyOrderElementsOf(expected);
            }
            String id = s3.createMultipartUpload(b -> b.bucket("data").key("ckpt/model.pt")).uploadId();
            String etag = s3.uploadPart(b -> b.bucket("data").key("ckpt/model.pt").uploadId(id).partNumber(1),
                    RequestBody.fromBytes(new byte[1000])).eTag();
            s3.completeMultipartUpload(b -> b.bucket("data").key("ckpt/model.pt").uploadId(id)
                    .multipartUpload(m -> m.parts(CompletedPart.builder().partNumber(1).eTag(etag).build())));
            assertThat(s3.listObjectsV2(b -> b.bucket("data").prefix("ckpt/")).contents()).extracting(S3Object::key, S3Object::size)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("ckpt/model.pt", 1000L));
            flush(ferry);
            assertThat(withoutUploadsInFlight(s3.listObjectsV2(b -> b.bucket("data").prefix("round")).contents())).hasSize(90);
        }
    }

    /**
     * A listing as "key=size", less the files s3proxy's file-system backend writes beside a key while a PUT of it
     * is in flight ({@code key-<uuid>}, renamed over the key when done): it lists them as objects, a fault of that
     * store that ferry passes on (the daemon cannot tell one from an object named so).
     */
    private static List<String> withoutUploadsInFlight(List<S3Object> listed) {
        java.util.Set<String> keys = new java.util.HashSet<>();
        listed.forEach(o -> keys.add(o.key()));
        List<String> out = new ArrayList<>();
        for (S3Object o : listed) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(.*)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
                    .matcher(o.key());
            if (!(m.matches() && keys.contains(m.group(1)))) {
                out.add(o.key() + "=" + o.size());
            }
        }
        return out;
    }

    @Test
    void aDelimiterTheStoreRefuses_isAnsweredAsS3Does_withAndWithoutWriteBack(@TempDir Path dir) throws Exception {
        TreeMap<String, Long> state = new TreeMap<>();
        for (String key : List.of("100%/a", "100%/b", "50% off", "a b/c", "a b/d", "ab", "x%y%z", "plain/k")) {
            state.put(key, (long) key.length());
        }
        for (String writeBack : List.of("false", "true")) {
            try (DaemonFixture ferry = DaemonFixture.overS3(dir.resolve("wb-" + writeBack)).with("write-back", writeBack).start();
                    S3Client s3 = ferry.sdk("a", "b")) {
                state.forEach((k, size) -> s3.putObject(b -> b.bucket("data").key(k), RequestBody.fromBytes(new byte[size.intValue()])));
                if (writeBack.equals("true")) {
                    flush(ferry); // s3proxy lists the files of uploads in flight (see withoutUploadsInFlight)
                }
                for (String delimiter : List.of("%", " ", "b", "/", "%/")) {
                    for (int maxKeys : new int[] {1, 2, 1000}) {
                        assertThat(listV2(s3, "", delimiter, null, maxKeys)).as("write-back %s delimiter '%s' max-keys %d", writeBack, delimiter, maxKeys)
                                .isEqualTo(expected(state, "", delimiter, null));
                    }
                    assertThat(listV2(s3, "a", delimiter, null, 1)).isEqualTo(expected(state, "a", delimiter, null));
                    assertThat(listV1(s3, "", delimiter, 1)).isEqualTo(expected(state, "", delimiter, null));
                }
            }
        }
    }

    /** The same listings through boto3, against moto (the reference S3) and ferry with and without write-back: one answer. */
    @Test
    void boto3_listsTheSame_fromMoto_andFerryInBothModes(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(new ProcessBuilder("python3", "-c", "import boto3, moto").start().waitFor() == 0, "python3 with boto3 and moto");
        Path script = dir.resolve("list.py");
        Files.writeString(script, """
                import sys, json, boto3, urllib.request
                s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="a", aws_secret_access_key="b", region_name="us-east-1")
                if sys.argv[2] == "create":
                    s3.create_bucket(Bucket="data")
                keys = ["100%/a", "100%/b", "50% off", "a b/c", "a b/d", "ab", "x%y%z", "plain/k", "plain/l/m", "z"]
                for k in keys:
                    s3.put_object(Bucket="data", Key=k, Body=k.encode())
                if len(sys.argv) > 3:  # ferry with write-back: s3proxy lists the files of uploads in flight
                    urllib.request.urlopen(urllib.request.Request(sys.argv[3], method="POST")).read()
                out = []
                for delimiter in ["", "/", "%", " "]:
                    for prefix in ["", "a", "plain/"]:
                        for max_keys in [2, 1000]:
                            args = dict(Bucket="data", Prefix=prefix, MaxKeys=max_keys)
                            if delimiter:
                                args["Delimiter"] = delimiter
                            names = []
                            for page in s3.get_paginator("list_objects_v2").paginate(**args):
                                names += [o["Key"] + "=" + str(o["Size"]) for o in page.get("Contents", [])]
                                names += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
                            out.append([delimiter, prefix, max_keys, sorted(names)])
                after = s3.list_objects_v2(Bucket="data", StartAfter="a b/c")
                out.append(["start-after", [o["Key"] for o in after.get("Contents", [])]])
                print(json.dumps(out))
                """);
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Process moto = new ProcessBuilder("python3", "-m", "moto.server", "-p", Integer.toString(port)).redirectErrorStream(true)
                .redirectOutput(dir.resolve("moto.log").toFile()).start();
        try {
            String motoUrl = "http://127.0.0.1:" + port;
            Await.until("moto's server at " + motoUrl, Duration.ofSeconds(30), () -> answers(motoUrl));
            String reference = run(script, motoUrl, "create");
            for (String writeBack : List.of("false", "true")) {
                try (DaemonFixture ferry = DaemonFixture.overS3(dir.resolve("wb-" + writeBack)).with("write-back", writeBack).start()) {
                    assertThat(run(script, ferry.endpoint().toString(), "exists", ferry.endpoint().resolve("/_ferry/v1/flush?timeout_ms=60000").toString()))
                            .as("write-back " + writeBack).isEqualTo(reference);
                }
            }
        } finally {
            moto.destroy();
            moto.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static boolean answers(String url) {
        try (HttpClient http = HttpClient.newHttpClient()) {
            http.send(HttpRequest.newBuilder(java.net.URI.create(url)).build(), HttpResponse.BodyHandlers.discarding());
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    private static String run(Path script, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("python3", script.toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
