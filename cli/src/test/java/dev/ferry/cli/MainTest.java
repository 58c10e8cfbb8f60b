package dev.ferry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class MainTest {
    record Run(int exit, String out, String err) {
    }

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void help_listsEverySubcommand() {
        Run r = run("--help");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("Usage: ferry").contains("store").contains("demo").contains("bench").contains("sim").contains("verify");
    }

    /**
     * Every command in a listing ({@code ferry --help}, {@code ferry bench --help}, {@code ferry demo --help}) has
     * a summary that stands alone: its entry, continuation lines joined, is one or more whole sentences.
     */
    @Test
    void help_everyCommandSummaryIsWholeSentences() {
        for (String[] args : new String[][] {{"--help"}, {"bench", "--help"}, {"demo", "--help"}}) {
            Run r = run(args);
            assertThat(r.exit()).isZero();
            String listing = r.out().substring(r.out().indexOf("Commands:") + "Commands:".length());
            java.util.Map<String, String> entries = new java.util.LinkedHashMap<>();
            String current = null;
            for (String line : listing.split("\\R")) {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("^  (\\S+)\\s+(.*)$").matcher(line);
                if (m.matches()) {
                    current = m.group(1);
                    entries.put(current, m.group(2).strip());
                } else if (current != null && !line.isBlank()) {
                    entries.merge(current, line.strip(), (a, b) -> a + " " + b);
                }
            }
            assertThat(entries).as(r.out()).isNotEmpty();
            entries.forEach((name, summary) -> assertThat(summary).as("'%s' in ferry %s", name, String.join(" ", args))
                    .matches("[A-Z].*[.)]").doesNotEndWith(",").doesNotEndWith(":"));
        }
        assertThat(run("--help").out()).contains("demo").contains("serve").contains("mount").contains("status").contains("store")
                .contains("index").contains("sim").contains("verify").contains("bench");
    }

    @Test
    void version_namesFerryAndJava() {
        Run r = run("--version");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).startsWith("ferry ").contains("Java");
    }

    @Test
    void badProfile_isOneSentence_exit2_noStackTrace() {
        Run r = run("store", "--root", "/tmp/ferry-never-used", "--profile", "fast");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("ferry: --profile: unknown profile 'fast': use cloud or none.");
    }

    @Test
    void negativeLatency_isRefused() {
        Run r = run("store", "--root", "/tmp/ferry-never-used", "--latency-ms", "-5");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--latency-ms must not be negative");
    }

    @Test
    void coldBenchCap_mustBePositive() {
        Run r = run("bench", "cold", "--cap-mib-s", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("ferry: --cap-mib-s must be positive: 0.");
    }

    @Test
    void unknownOption_namesIt() {
        Run r = run("store", "--root", "/tmp/x", "--bogus");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("ferry: Unknown option: '--bogus'. Try 'ferry store --help'.");
    }

    @Test
    void aMistypedCommand_getsTheNearestOnes() {
        Run r = run("indx", "s3://b/p");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip()).startsWith("ferry: Unmatched arguments from index 0: 'indx', 's3://b/p'.")
                .contains("Did you mean 'ferry index'").endsWith("Try 'ferry --help'.");
        assertThat(r.err().strip().lines().count()).as("one line").isEqualTo(1);
    }

    @Test
    void portInUse_isOneSentence() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Run r = run("store", "--root", System.getProperty("java.io.tmpdir") + "/ferry-port-test", "--create", "--port",
                    Integer.toString(taken.getLocalPort()), "--profile", "none");
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).startsWith("ferry: cannot start the embedded store on 127.0.0.1:" + taken.getLocalPort());
            assertThat(r.err().strip().lines().count()).isEqualTo(1);
        }
    }

    @Test
    void aMissingStoreFolder_isAnError_unlessCreateIsGiven(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String typo = dir.resolve("corpsu").toString();
        for (String[] args : new String[][] {{"store", "--root", typo, "--port", "0"}, {"serve", "--store-root", typo, "--port", "0"}}) {
            Run r = run(args);
            assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(r.err()).isEqualTo("ferry: " + args[1] + " " + typo + " does not exist: check the path, or add --create to start "
                    + "an empty store there.\n");
        }
        assertThat(java.nio.file.Files.exists(dir.resolve("corpsu"))).as("nothing was created").isFalse();
        java.nio.file.Files.writeString(dir.resolve("file"), "x");
        Run notAFolder = run("serve", "--store-root", dir.resolve("file").toString());
        assertThat(notAFolder.err()).isEqualTo("ferry: --store-root " + dir.resolve("file") + " is not a directory.\n");
    }

    @Test
    void anUpstreamThatIsNotS3_stopsServeAtStart_inOneSentence(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        com.sun.net.httpserver.HttpServer web = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        web.createContext("/", exchange -> {
            byte[] page = "<html><body>a web site</body></html>".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, page.length);
            exchange.getResponseBody().write(page);
            exchange.close();
        });
        web.start();
        try {
            Run r = run("serve", "--upstream", "http://127.0.0.1:" + web.getAddress().getPort(), "--port", "0", "--cache-dir",
                    dir.resolve("cache").toString());
            assertThat(r.exit()).isEqualTo(1);
            // with no credentials anywhere that is what it says; with some, that the answer is not S3's
            assertThat(r.err()).startsWith("ferry: the upstream http://127.0.0.1:" + web.getAddress().getPort() + " cannot be used: ")
                    .containsAnyOf("no credentials for it were found", "does not answer as an S3 endpoint");
            assertThat(r.err().strip().lines().count()).isEqualTo(1);
            assertThat(r.out()).doesNotContain("ready");
        } finally {
            web.stop(0);
        }
    }

    @Test
    void anUpstreamThatRefusesTheKeys_stopsServeAtStart_inOneSentence(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        // a ferry daemon that checks signatures, as the upstream; the keys offered (the SDK's chain reads these
        // system properties) are not its own
        dev.ferry.serve.ServeConfig upstream = dev.ferry.serve.ServeConfig.defaults().with(java.util.Map.of("port", "0", "access-key",
                "realkey", "secret-key", "realsecret", "data-dir", dir.resolve("data").toString(), "cache-dir", dir.resolve("up").toString(),
                "profile", "none"));
        String oldKey = System.getProperty("aws.accessKeyId");
        String oldSecret = System.getProperty("aws.secretAccessKey");
        try (dev.ferry.serve.Daemon store = dev.ferry.serve.Daemon.start(upstream)) {
            System.setProperty("aws.accessKeyId", "notthekey");
            System.setProperty("aws.secretAccessKey", "notthesecret");
            Run r = run("serve", "--upstream", store.endpoint().toString(), "--port", "0", "--cache-dir", dir.resolve("cache").toString());
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).isEqualTo("ferry: the upstream " + store.endpoint() + " cannot be used: it refused ferry's credentials "
                    + "(InvalidAccessKeyId): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.\n");
        } finally {
            restore("aws.accessKeyId", oldKey);
            restore("aws.secretAccessKey", oldSecret);
        }
    }

    /** {@code args} run with System.out caught (the commands print there): exit code and what they printed. */
    static Run runPrinting(String... args) {
        java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        java.io.PrintStream old = System.out;
        System.setOut(new java.io.PrintStream(printed, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            Run r = run(args);
            return new Run(r.exit(), printed.toString(java.nio.charset.StandardCharsets.UTF_8) + r.out(), r.err());
        } finally {
            System.setOut(old);
        }
    }

    @Test
    void warm_thenCacheLsAndDrop_throughADaemon(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        dev.ferry.serve.ServeConfig config = dev.ferry.serve.ServeConfig.defaults().with(java.util.Map.of("port", "0", "data-dir",
                dir.resolve("data").toString(), "cache-dir", dir.resolve("cache").toString(), "profile", "none", "block-size", "1MiB"));
        try (dev.ferry.serve.Daemon daemon = dev.ferry.serve.Daemon.start(config);
                dev.ferry.s3client.S3ObjectStore s3 = new dev.ferry.s3client.S3ObjectStore(dev.ferry.s3client.S3StoreConfig.endpoint(
                        daemon.node().stack().origin().store() instanceof dev.ferry.s3client.S3ObjectStore o ? o.config().endpoint() : null,
                        "k", "s"))) {
            s3.createBucket("data");
            for (int i = 0; i < 10; i++) {
                s3.put(dev.ferry.store.ObjectKey.of("data", "train/" + i), dev.ferry.store.PutBody.ofBytes(new byte[50_000]));
            }
            String url = daemon.endpoint().toString();
            Run warm = runPrinting("warm", "s3://data/train/", "--url", url);
            assertThat(warm.exit()).as(warm.err()).isZero();
            assertThat(warm.out()).contains("ferry warm: s3://data/train/: 10 objects, 488.3 KiB resident");
            Run ls = runPrinting("cache", "ls", "s3://data/", "--url", url);
            assertThat(ls.exit()).as(ls.err()).isZero();
            assertThat(ls.out()).contains("s3://data/train/").contains("488.3 KiB");
            Run drop = runPrinting("cache", "drop", "s3://data/train/", "--url", url);
            assertThat(drop.out()).contains("ferry cache drop: 10 blocks (488.3 KiB) dropped under s3://data/train/");
            assertThat(runPrinting("cache", "ls", "--url", url).out()).contains("(nothing resident)");
            assertThat(run("warm", "--url", url).err()).isEqualTo("ferry: ferry warm needs one of s3://BUCKET/PREFIX, --manifest BUCKET/KEY or --job NAME.\n");
            assertThat(run("warm", "--epoch", "2", "s3://data/train/", "--url", url).err()).isEqualTo("ferry: --epoch goes with --job.\n");
            assertThat(run("cache", "drop", "data/train", "--url", url).err())
                    .isEqualTo("ferry: the location must look like s3://BUCKET/PREFIX, not 'data/train'.\n");
        }
        Run gone = run("cache", "ls", "--url", "http://127.0.0.1:1");
        assertThat(gone.exit()).isEqualTo(1);
        assertThat(gone.err()).startsWith("ferry: no ferry daemon answers at http://127.0.0.1:1");
    }

    private static void restore(String property, String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }

    @Test
    void sim_synthetic_printsEveryPolicyAsJson() {
        java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
        java.io.PrintStream old = System.out;
        System.setOut(new java.io.PrintStream(buffer, true));
        int exit;
        try {
            exit = run("sim", "--synthetic", "--objects", "200", "--epochs", "3", "--cache-fraction", "0.5", "--json").exit();
        } finally {
            System.setOut(old);
        }
        assertThat(exit).isZero();
        String json = buffer.toString().strip();
        assertThat(json).startsWith("{\"policies\":[{\"policy\":\"lru\"")
                .contains("{\"policy\":\"pin\",\"requests\":600,\"hits\":200,\"hit_rate\":0.333333")
                .contains("\"policy\":\"min\"").contains("\"upstream_bytes\":");
    }

    @Test
    void sim_badTraceLine_namesTheLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path trace = java.nio.file.Files.writeString(dir.resolve("t.txt"), "# ok\na 10\nb ten\n");
        Run r = run("sim", "--trace", trace.toString(), "--cache-size", "1KB");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("ferry: " + trace + " line 3: size 'ten' is not a whole number of bytes.");
    }

    @Test
    void sim_badSizeAndPolicy_areOneSentence() {
        assertThat(run("sim", "--synthetic", "--cache-size", "12 parsecs").err().strip())
                .isEqualTo("ferry: --cache-size: size '12 parsecs' has an unknown unit 'parsecs': use B, KB, MB, GB, TB, PB or KiB, MiB, GiB, TiB, PiB.");
        assertThat(run("sim", "--synthetic", "--cache-fraction", "0.5", "--policies", "lru,fifo").err().strip())
                .isEqualTo("ferry: --policies: unknown policy 'fifo': use one of lru, pin, sieve, min.");
    }

    static String stdout(String... args) {
        java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
        java.io.PrintStream old = System.out;
        System.setOut(new java.io.PrintStream(buffer, true));
        try {
            assertThat(run(args).exit()).isZero();
        } finally {
            System.setOut(old);
        }
        return buffer.toString().strip();
    }

    @Test
    void sim_nodes_partitionNode_readsTheCorpusOnce_andGlobalMultipliesIt_withTheMixInTheJson() throws Exception {
        // tiers of 1.5 shares: a node's share fits its tier, while the global plan has every node read every shard
        String[] cluster = {"sim", "--nodes", "4", "--dataset-bytes", "256MiB", "--shard-bytes", "4MiB", "--samples-per-shard", "32",
                "--cache-per-node", "96MiB", "--block-size", "1MiB", "--epochs", "2", "--batch-size", "16", "--json"};
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        var node = json.readTree(stdout(concat(cluster, "--partition", "node")));
        var global = json.readTree(stdout(concat(cluster, "--partition", "global")));
        assertThat(node.get("partition").asText()).isEqualTo("node");
        assertThat(global.get("partition").asText()).isEqualTo("global");
        long dataset = 256L << 20;
        assertThat(node.get("epochs").get(0).get("egress_bytes").asLong()).isEqualTo(dataset);
        assertThat(node.get("epochs").get(1).get("egress_bytes").asLong()).isZero();
        assertThat(node.get("epochs").get(0).get("origin_requests").asLong()).isEqualTo(256);
        assertThat(global.get("epochs").get(0).get("egress_bytes").asLong()).isGreaterThan(2 * dataset);
        assertThat(node.get("epochs").get(0).get("global_batch_shard_mix").asDouble())
                .isGreaterThan(global.get("epochs").get(0).get("global_batch_shard_mix").asDouble());
        assertThat(global.get("advice").get(0).asText()).contains("partition: node");
        assertThat(run(concat(cluster, "--partition", "rank")).err().strip()).isEqualTo("ferry: partition must be node, global or auto, not 'rank'.");
    }

    static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void sim_nodes_tellsItsProgressPerEpochOnStderr_andKeepsStdoutTheJson() throws Exception {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream oldOut = System.out;
        java.io.PrintStream oldErr = System.err;
        System.setOut(new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8));
        System.setErr(new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
        int exit;
        try {
            exit = run("sim", "--nodes", "4", "--dataset-bytes", "64MiB", "--shard-bytes", "4MiB", "--samples-per-shard", "32",
                    "--cache-per-node", "32MiB", "--epochs", "2", "--json").exit();
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
        assertThat(exit).isZero();
        assertThat(err.toString(java.nio.charset.StandardCharsets.UTF_8)).contains("simulating 2 epochs of 4 nodes")
                .contains("epoch 1 of 2 simulated").contains("epoch 2 of 2 simulated");
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.toString(java.nio.charset.StandardCharsets.UTF_8))
                .path("epochs")).as("stdout is the JSON alone").hasSize(2);
    }

    @Test
    void sim_plan_predictsEgressPerEpoch_minAndPinBeatLruAtBlockLevel() {
        java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
        java.io.PrintStream old = System.out;
        System.setOut(new java.io.PrintStream(buffer, true));
        int exit;
        try {
            exit = run("sim", "--plan", "--shards", "16", "--samples-per-shard", "64", "--shard-size", "16MiB",
                    "--epochs", "3", "--cache-fraction", "0.5", "--policies", "lru,pin,min", "--json").exit();
        } finally {
            System.setOut(old);
        }
        assertThat(exit).isZero();
        String json = buffer.toString().strip();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\{\"policy\":\"(\\w+)\",\"epochs\":\\[(.*?)\\]\\}").matcher(json);
        java.util.Map<String, Long> epoch3 = new java.util.HashMap<>();
        while (m.find()) {
            java.util.regex.Matcher e3 = java.util.regex.Pattern.compile("\"epoch\":3,.*\"upstream_bytes\":(\\d+)").matcher(m.group(2));
            assertThat(e3.find()).isTrue();
            epoch3.put(m.group(1), Long.parseLong(e3.group(1)));
        }
        assertThat(epoch3).containsKeys("lru", "pin", "min");
        assertThat(epoch3.get("min")).isLessThan(epoch3.get("lru")).isLessThanOrEqualTo(epoch3.get("pin"));
    }

    @Test
    void verbose_addsTheStackTrace_otherwiseOneSentence() throws Exception {
        java.nio.file.Path bad = java.nio.file.Files.createTempFile("not-a-cache", ".txt");
        Run quiet = run("verify", "--cache-dir", bad.toString());
        assertThat(quiet.exit()).isEqualTo(1);
        assertThat(quiet.err().strip()).isEqualTo("ferry: no cache directory at " + bad + ".");
        Run verbose = run("--verbose", "verify", "--cache-dir", bad.toString());
        assertThat(verbose.exit()).isEqualTo(1);
        assertThat(verbose.err()).startsWith("ferry: no cache directory at " + bad + ".").contains("\tat dev.ferry.");
    }
}
