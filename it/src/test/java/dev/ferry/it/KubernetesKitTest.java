package dev.ferry.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ferry.embedded.CloudProfile;
import dev.ferry.embedded.EmbeddedStore;
import dev.ferry.loader.SyntheticDataset;
import dev.ferry.plan.Manifest;
import dev.ferry.plan.ManifestJson;
import dev.ferry.s3client.S3ObjectStore;
import dev.ferry.s3client.S3StoreConfig;
import dev.ferry.serve.ServeConfig;
import dev.ferry.store.ObjectKey;
import dev.ferry.store.PutBody;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * The Kubernetes kit (deploy/kubernetes), rendered by a real {@code kubectl kustomize} (no cluster), checked against
 * a real daemon started the way the DaemonSet's container starts it: its args, the ConfigMap's ferry.yaml at the
 * mount path, its env with the Secrets' keys. Every flag and config key exists (the daemon's own parser reads them),
 * every probe path is answered by the running daemon, the ports agree (container, Services, the group's DNS name,
 * --self, the preStop URL), and the preStop command, run as the image runs it (deploy/docker/ferry), flushes a
 * write-back PUT into the store. Then the worked example (examples/pytorchjob): its train.py, under a real torchrun
 * with the example's environment, reads three epochs through that daemon and stores its checkpoints.
 *
 * <p>What differs from a cluster, and only that: paths are under a temporary folder (each volume's mount path
 * inside it), the port is a free one (every mention of the configured port is swapped together, once the test has
 * checked that they agree), the upstream is the embedded S3 store, the pod IP is 127.0.0.1, and {@code --group
 * dns:NAME:PORT} is checked against the headless Service but run as the static group of this one daemon, since no
 * DNS server answers the Service's name here.
 */
class KubernetesKitTest {
    private static final Path REPO = Path.of(System.getProperty("user.dir")).getParent();
    private static final Map<String, String> SECRETS = Map.of("ferry-credentials/access-key", "AKK8STEST", "ferry-credentials/secret-key",
            "k8s-secret/value+1", "ferry-s3/access-key-id", "embedded", "ferry-s3/secret-access-key", "embedded");

    @TempDir
    static Path dir;
    static List<JsonNode> kit;
    static JsonNode container;
    static int port;
    static int freePort;
    static EmbeddedStore store;
    static Process daemon;
    static Map<String, String> env;
    static Path root;

    // ---- rendering -----------------------------------------------------------------------------

    static List<JsonNode> render(Path kustomization) throws Exception {
        Path kubectl = Servers.onPath("kubectl");
        Servers.requireTool(kubectl != null, "kubectl (the render is kubectl kustomize's)");
        ProcessBuilder pb = new ProcessBuilder(kubectl.toString(), "kustomize", kustomization.toString());
        Process p = pb.start();
        String yaml = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("kubectl kustomize %s: %s", kustomization, err).isZero();
        return new YAMLMapper().readerFor(JsonNode.class).<JsonNode>readValues(yaml).readAll();
    }

    static JsonNode only(List<JsonNode> docs, String kind, Predicate<JsonNode> which) {
        List<JsonNode> found = docs.stream().filter(d -> d.path("kind").asText().equals(kind)).filter(which).toList();
        assertThat(found).as("one %s", kind).hasSize(1);
        return found.get(0);
    }

    static JsonNode peers() {
        return only(kit, "Service", s -> s.path("spec").path("clusterIP").asText().equals("None"));
    }

    static JsonNode nodeService() {
        return only(kit, "Service", s -> s.path("spec").path("internalTrafficPolicy").asText().equals("Local"));
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** A container's environment as the kubelet gives it: values, the pod IP (127.0.0.1 here), the test's Secrets. */
    static Map<String, String> environment(JsonNode container) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode e : container.path("env")) {
            String name = e.get("name").asText();
            if (e.has("value")) {
                out.put(name, e.get("value").asText());
            } else if (e.path("valueFrom").has("fieldRef")) {
                assertThat(e.path("valueFrom").path("fieldRef").path("fieldPath").asText()).as(name).isEqualTo("status.podIP");
                out.put(name, "127.0.0.1");
            } else {
                JsonNode ref = e.path("valueFrom").path("secretKeyRef");
                String secret = ref.path("name").asText() + "/" + ref.path("key").asText();
                assertThat(SECRETS).as("%s comes from the Secret key %s", name, secret).containsKey(secret);
                out.put(name, SECRETS.get(secret));
            }
        }
        return out;
    }

    /** {@code $(VAR)} expanded from {@code env}, as the kubelet expands a container's args. */
    static String expand(String arg, Map<String, String> env) {
        Matcher m = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)").matcher(arg);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            assertThat(env).as("$(%s) in %s", m.group(1), arg).containsKey(m.group(1));
            m.appendReplacement(out, Matcher.quoteReplacement(env.get(m.group(1))));
        }
        return m.appendTail(out).toString();
    }

    /** A path inside the container, under the test's folder. */
    static String inContainer(String path) {
        return root.resolve(path.substring(1)).toString();
    }

    // ---- the daemon, as the DaemonSet starts it ----------------------------------------------------

    @BeforeAll
    static void startTheDaemonAsTheDaemonSetDoes() throws Exception {
        kit = render(REPO.resolve("deploy/kubernetes"));
        JsonNode ds = only(kit, "DaemonSet", d -> true);
        container = ds.at("/spec/template/spec/containers/0");
        JsonNode config = only(kit, "ConfigMap", c -> c.path("data").has("ferry.yaml"));
        root = dir.resolve("pod");
        env = environment(container);

        // the ConfigMap's ferry.yaml where the container mounts it, read by the daemon's own parser
        JsonNode configMount = null;
        for (JsonNode v : ds.at("/spec/template/spec/volumes")) {
            if (v.path("configMap").path("name").asText().equals(config.at("/metadata/name").asText())) {
                for (JsonNode m : container.path("volumeMounts")) {
                    configMount = m.path("name").asText().equals(v.path("name").asText()) ? m : configMount;
                }
            }
        }
        assertThat(configMount).as("the ConfigMap (its hashed name) is a volume the daemon mounts").isNotNull();
        Path original = Path.of(inContainer(configMount.path("mountPath").asText())).resolve("ferry.yaml");
        Files.createDirectories(original.getParent());
        Files.writeString(original, config.at("/data/ferry.yaml").asText());
        Map<String, String> settings = ServeConfig.readFile(original);
        port = Integer.parseInt(settings.getOrDefault("port", "9099"));

        // run it: the same keys, with paths inside the test's folder, a free port and the embedded store upstream
        store = EmbeddedStore.start(dir.resolve("s3"), 0, CloudProfile.none());
        freePort = Servers.freePort();
        Map<String, String> local = new LinkedHashMap<>(settings);
        local.replaceAll((k, v) -> v.startsWith("/") ? inContainer(v) : v);
        local.put("port", Integer.toString(freePort));
        local.put("upstream", store.endpoint().toString());
        assertThat(local.keySet()).isEqualTo(settings.keySet());
        StringBuilder yaml = new StringBuilder();
        local.forEach((k, v) -> yaml.append(k).append(": \"").append(v).append("\"\n"));
        Files.writeString(original, yaml);
        for (JsonNode m : container.path("volumeMounts")) {
            Files.createDirectories(Path.of(inContainer(m.path("mountPath").asText())));
        }

        List<String> args = new ArrayList<>();
        List<String> given = strings(container.path("args"));
        for (int i = 0; i < given.size(); i++) {
            String a = expand(given.get(i), env);
            if (i > 0 && given.get(i - 1).equals("--group")) {
                a = "http://127.0.0.1:" + port; // the static group of this daemon: no DNS answers the Service's name here
            } else if (i > 0 && given.get(i - 1).equals("--config")) {
                a = inContainer(a);
            }
            args.add(a.replace(":" + port, ":" + freePort));
        }
        Map<String, String> daemonEnv = new LinkedHashMap<>(env);
        daemonEnv.replaceAll((k, v) -> v.replace(":" + port, ":" + freePort));
        ProcessBuilder pb = new ProcessBuilder(Servers.javaCommand("dev.ferry.cli.Main", args.toArray(String[]::new)))
                .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile());
        pb.environment().putAll(daemonEnv);
        daemon = pb.start();
        try {
            Servers.awaitPort(freePort, Duration.ofSeconds(90), daemon);
        } catch (IOException e) {
            throw new AssertionError(e.getMessage() + ": " + Files.readString(dir.resolve("daemon.log")), e);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        Servers.stop(daemon);
        if (store != null) {
            store.close();
        }
    }

    // ---- the kit -----------------------------------------------------------------------------------

    @Test
    void theKitIsADaemonSetOnGpuNodesAHeadlessServiceAndANodeLocalService() {
        JsonNode ds = only(kit, "DaemonSet", d -> true);
        JsonNode pod = ds.at("/spec/template/spec");
        assertThat(pod.path("nodeSelector").has("nvidia.com/gpu.present")).as("one daemon per GPU node").isTrue();
        assertThat(container.at("/resources/requests").has("cpu")).isTrue();
        assertThat(container.at("/resources/requests").has("memory")).isTrue();
        for (JsonNode service : List.of(peers(), nodeService())) {
            assertThat(service.at("/spec/selector")).as("%s selects the daemons", service.at("/metadata/name"))
                    .isEqualTo(ds.at("/spec/selector/matchLabels"));
            assertThat(service.at("/metadata/namespace").asText()).isEqualTo(ds.at("/metadata/namespace").asText());
        }
        // the local tier is the node's disk: cache-dir lies on a hostPath (or local PV) mount
        JsonNode config = only(kit, "ConfigMap", c -> c.path("data").has("ferry.yaml"));
        Matcher m = Pattern.compile("(?m)^cache-dir:\\s*(\\S+)").matcher(config.at("/data/ferry.yaml").asText());
        assertThat(m.find()).isTrue();
        String cacheDir = m.group(1);
        boolean onNodeDisk = false;
        for (JsonNode mount : container.path("volumeMounts")) {
            for (JsonNode v : pod.path("volumes")) {
                if (v.path("name").equals(mount.path("name")) && (v.has("hostPath") || v.has("persistentVolumeClaim"))
                        && cacheDir.startsWith(mount.path("mountPath").asText() + "/")) {
                    onNodeDisk = true;
                }
            }
        }
        assertThat(onNodeDisk).as("cache-dir %s is on the node's disk", cacheDir).isTrue();
    }

    @Test
    void everyFlagAndKeyIsTheDaemonsOwn() {
        List<String> args = strings(container.path("args"));
        assertThat(args.get(0)).isEqualTo("serve");
        TreeSet<String> flags = new TreeSet<>();
        for (String a : args) {
            if (a.startsWith("--")) {
                flags.add(a.substring(2));
            }
        }
        for (String flag : flags) {
            dev.ferry.settings.Setting<?> setting = ServeConfig.settings().stream().filter(s -> s.key().equals(flag)).findFirst().orElse(null);
            assertThat(flag.equals("config") || (setting != null && setting.isFlag())).as("--%s is a flag of ferry serve", flag).isTrue();
        }
        assertThat(flags).contains("config", "group", "self", "bind");
        // the keys: ServeConfig.readFile refused none (it throws on an unknown key), and the daemon started with them
        assertThat(daemon.isAlive()).isTrue();
    }

    @Test
    void thePortsAgree() {
        JsonNode http = null;
        for (JsonNode p : container.path("ports")) {
            http = p.path("containerPort").asInt() == port ? p : http;
        }
        assertThat(http).as("the container exposes ferry.yaml's port %d", port).isNotNull();
        String portName = http.path("name").asText();
        for (JsonNode service : List.of(peers(), nodeService())) {
            JsonNode p = service.at("/spec/ports/0");
            String target = p.path("targetPort").asText();
            assertThat(target.equals(portName) || target.equals(Integer.toString(port))).as("%s's targetPort", service.at("/metadata/name")).isTrue();
        }
        // the group: dns:<the headless Service's name>:<the port its pods' addresses answer on>
        List<String> args = strings(container.path("args"));
        String group = args.get(args.indexOf("--group") + 1);
        JsonNode peers = peers();
        assertThat(group).isEqualTo("dns:" + peers.at("/metadata/name").asText() + "." + peers.at("/metadata/namespace").asText()
                + ".svc.cluster.local:" + port);
        assertThat(peers.at("/spec/ports/0/port").asInt()).isEqualTo(port);
        assertThat(args.get(args.indexOf("--self") + 1)).isEqualTo("http://$(POD_IP):" + port);
        for (String probe : List.of("startupProbe", "readinessProbe", "livenessProbe")) {
            String p = container.path(probe).path("httpGet").path("port").asText();
            assertThat(p.equals(portName) || p.equals(Integer.toString(port))).as(probe + "'s port").isTrue();
        }
        assertThat(strings(container.at("/lifecycle/preStop/exec/command"))).contains("http://127.0.0.1:" + port);
    }

    @Test
    void everyProbePathIsAnsweredByTheRunningDaemon_unsignedThoughItRequiresSignatures() throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            for (String probe : List.of("startupProbe", "readinessProbe", "livenessProbe")) {
                String path = container.path(probe).path("httpGet").path("path").asText();
                assertThat(path).as(probe).startsWith("/_ferry");
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + freePort + path)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as("%s %s: %s", probe, path, r.body()).isEqualTo(200);
            }
            HttpResponse<String> unsigned = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + freePort + "/ckpt/x")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(unsigned.statusCode()).as("the daemon requires signatures (the Secret's keys)").isEqualTo(403);
        }
    }

    @Test
    void thePreStopCommand_asTheImageRunsIt_flushesAWriteBackPutIntoTheStore() throws Exception {
        try (S3ObjectStore origin = new S3ObjectStore(S3StoreConfig.endpoint(store.endpoint(), "embedded", "embedded"))) {
            origin.createBucket("ckpt");
        }
        byte[] checkpoint = new byte[3 << 20];
        new java.util.Random(7).nextBytes(checkpoint);
        try (S3Client s3 = S3Client.builder().endpointOverride(URI.create("http://127.0.0.1:" + freePort)).forcePathStyle(true)
                .region(Region.US_EAST_1).httpClientBuilder(ApacheHttpClient.builder())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(env.get("FERRY_ACCESS_KEY"), env.get("FERRY_SECRET_KEY"))))
                .build()) {
            s3.putObject(b -> b.bucket("ckpt").key("run/step-100.pt"), RequestBody.fromBytes(checkpoint));
        }
        List<String> command = new ArrayList<>();
        for (String c : strings(container.at("/lifecycle/preStop/exec/command"))) {
            command.add(c.replace(":" + port, ":" + freePort));
        }
        Servers.Result refused = runAsTheImage(command, Map.of());
        assertThat(refused.exitCode()).as("without the Secret's keys the fence is refused: " + refused.output()).isEqualTo(1);
        assertThat(refused.output()).contains("(403)");
        Servers.Result r = runAsTheImage(command, env);
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("every write acknowledged before the fence is in the object store");
        assertThat(Files.readAllBytes(dir.resolve("s3/ckpt/run/step-100.pt"))).as("in the object store").isEqualTo(checkpoint);
    }

    /**
     * {@code command} (an exec hook's, starting with {@code ferry}) as the image runs it: deploy/docker/ferry with
     * the image's layout (jre/, this test's Java; lib/, the CLI's jar and its dependencies, as the release that
     * scripts/image puts in the image has them), when the build made cli/target/lib and the CLI's jar; else the CLI
     * on this test's class path. deploy/tests/test_image.py runs the image itself, with podman.
     */
    static Servers.Result runAsTheImage(List<String> command, Map<String, String> env) throws Exception {
        assertThat(command.get(0)).isEqualTo("ferry");
        List<String> full = new ArrayList<>();
        Map<String, String> extra = new LinkedHashMap<>(env);
        Path deps = REPO.resolve("cli/target/lib");
        List<Path> cliJars;
        try (var found = Files.list(REPO.resolve("cli/target"))) {
            cliJars = found.filter(f -> f.getFileName().toString().matches("ferry-cli-.*\\.jar")).toList();
        }
        if (Files.isDirectory(deps) && cliJars.size() == 1) {
            Path home = REPO.resolve("it/target/image-opt-ferry"); // links out of a @TempDir make JUnit warn when it cleans up
            Path lib = home.resolve("lib");
            if (Files.isSymbolicLink(lib)) {
                Files.delete(lib); // the layout before the release's: a link to cli/target/lib, whose jars are not ours to delete
            }
            Files.createDirectories(lib);
            Files.deleteIfExists(home.resolve("jre"));
            Files.createSymbolicLink(home.resolve("jre"), Path.of(System.getProperty("java.home")));
            try (var old = Files.list(lib); var jars = Files.list(deps)) {
                for (Path link : old.toList()) {
                    Files.delete(link);
                }
                for (Path jar : java.util.stream.Stream.concat(jars, cliJars.stream()).toList()) {
                    Files.createSymbolicLink(lib.resolve(jar.getFileName()), jar);
                }
            }
            String dockerfile = Files.readString(REPO.resolve("Dockerfile"));
            assertThat(dockerfile).contains("COPY jre /opt/ferry/jre", "COPY ferry /opt/ferry", "COPY ferry-launcher /usr/local/bin/ferry");
            assertThat(Files.readString(REPO.resolve("scripts/image"))).contains("cp deploy/docker/ferry \"$CONTEXT/ferry-launcher\"");
            full.addAll(List.of("sh", REPO.resolve("deploy/docker/ferry").toString()));
            extra.put("FERRY_HOME", home.toString());
        } else {
            System.out.println("NOTE: cli/target/lib or the CLI's jar is missing (mvn package makes them): the preStop command runs on the test's class path");
            full.addAll(Servers.javaCommand("dev.ferry.cli.Main"));
        }
        full.addAll(command.subList(1, command.size()));
        ProcessBuilder pb = new ProcessBuilder(full).redirectErrorStream(true);
        pb.environment().remove("FERRY_ACCESS_KEY");
        pb.environment().remove("FERRY_SECRET_KEY");
        pb.environment().putAll(extra);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        return new Servers.Result(p.exitValue(), new String(out, java.nio.charset.StandardCharsets.UTF_8));
    }

    // ---- the worked example ------------------------------------------------------------------------

    @Test
    void theExamplePyTorchJob_trainsThroughTheNodesDaemon_underARealTorchrun() throws Exception {
        List<JsonNode> example = render(REPO.resolve("deploy/kubernetes/examples/pytorchjob"));
        JsonNode job = only(example, "PyTorchJob", j -> true);
        JsonNode trainScript = only(example, "ConfigMap", c -> c.path("data").has("train.py"));
        JsonNode node = nodeService();
        String nodeUrl = "http://" + node.at("/metadata/name").asText() + "." + node.at("/metadata/namespace").asText() + ".svc.cluster.local:"
                + node.at("/spec/ports/0/port").asInt();
        Map<String, String> podEnv = null;
        for (String replica : List.of("Master", "Worker")) {
            JsonNode spec = job.at("/spec/pytorchReplicaSpecs/" + replica + "/template/spec");
            JsonNode pytorch = spec.at("/containers/0");
            assertThat(pytorch.path("name").asText()).as("the training operator's container name").isEqualTo("pytorch");
            assertThat(strings(pytorch.path("command"))).isEqualTo(List.of("torchrun", "/workspace/train.py"));
            assertThat(pytorch.at("/resources/limits/nvidia.com~1gpu").asText()).as("a GPU per process").isEqualTo(job.at("/spec/nprocPerNode").asText());
            Map<String, String> e = environment(pytorch);
            assertThat(e.get("FERRY_ENDPOINT")).as("the node-local Service").isEqualTo(nodeUrl);
            assertThat(e.get("FERRY_ACCESS_KEY")).isEqualTo(env.get("FERRY_ACCESS_KEY"));
            assertThat(strings(spec.at("/initContainers/0/command")).get(2)).contains("/opt/ferry/python/ferry_client");
            assertThat(e.get("PYTHONPATH")).isEqualTo(spec.at("/initContainers/0/volumeMounts/0/mountPath").asText());
            podEnv = podEnv == null ? e : podEnv;
            assertThat(e).isEqualTo(podEnv);
        }
        assertThat(Files.readString(REPO.resolve("Dockerfile"))).as("the client's package where the init container copies it from")
                .contains("COPY ferry /opt/ferry", "extractall('/opt/ferry/python')");

        Path python = Servers.onPath("python3");
        Servers.requireTool(python != null, "python3");
        Servers.requireTool(Servers.run(Duration.ofMinutes(2), Map.of(), python.toString(), "-c", "import torch").exitCode() == 0, "PyTorch ('torch')");
        // the dataset and its manifest where the example says they are, in the daemon's upstream
        String manifestKey = podEnv.get("FERRY_MANIFEST_KEY");
        String bucket = manifestKey.substring(0, manifestKey.indexOf('/'));
        Manifest manifest;
        try (S3ObjectStore origin = new S3ObjectStore(S3StoreConfig.endpoint(store.endpoint(), "embedded", "embedded"))) {
            origin.createBucket(bucket);
            manifest = SyntheticDataset.write(origin, bucket, "train", 8, 16, 4096, 3);
            Path file = dir.resolve("manifest.json");
            ManifestJson.write(manifest, "s3://" + bucket + "/train", file);
            origin.put(ObjectKey.of(bucket, manifestKey.substring(bucket.length() + 1)), PutBody.ofBytes(Files.readAllBytes(file)));
        }
        Path workspace = dir.resolve("workspace");
        Files.createDirectories(workspace);
        Files.writeString(workspace.resolve("train.py"), trainScript.at("/data/train.py").asText());
        Map<String, String> run = new LinkedHashMap<>(podEnv);
        run.put("FERRY_ENDPOINT", "http://127.0.0.1:" + freePort); // the node-local Service's one endpoint: this node's daemon
        run.put("PYTHONPATH", REPO.resolve("clients/python").toString()); // what the init container copies from the image
        run.put("LOADER_WORKERS", "2"); // two cores here, not a GPU node's
        List<String> torchrun = List.of(python.toString(), "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                workspace.resolve("train.py").toString());
        Servers.Result r = Servers.run(Duration.ofMinutes(8), run, torchrun.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.output()).isZero();
        int epochs = Integer.parseInt(podEnv.get("EPOCHS"));
        assertThat(r.output()).contains(podEnv.get("FERRY_JOB") + ": " + manifest.totalSamples() + " samples, 2 ranks")
                .contains("epoch " + epochs + " done");

        try (HttpClient http = HttpClient.newHttpClient()) {
            JsonNode status = new ObjectMapper().readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + freePort
                    + "/_ferry/v1/status")).build(), HttpResponse.BodyHandlers.ofString()).body());
            JsonNode trained = null;
            for (JsonNode j : status.path("jobs")) {
                trained = j.path("job").asText().equals(podEnv.get("FERRY_JOB")) ? j : trained;
            }
            assertThat(trained).as("the job, registered by both ranks, runs once").isNotNull();
            assertThat(trained.path("epochs")).hasSize(epochs);
            long padded = 2L * ((manifest.totalSamples() + 1) / 2); // every rank steps as often: the plan pads the last
            for (JsonNode e : trained.path("epochs")) {
                assertThat(e.path("samples").asLong()).as("every sample of epoch %s reported", e.path("epoch")).isEqualTo(padded);
            }
        }
        String checkpoints = podEnv.get("CHECKPOINTS");
        for (int e = 1; e <= epochs; e++) {
            assertThat(dir.resolve("s3").resolve(checkpoints).resolve("epoch-" + e + ".pt")).as("checkpoint %d flushed to the store", e).exists();
        }
    }
}
