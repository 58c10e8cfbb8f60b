"""ferry's image, run for real with podman (scripts/image builds it; scripts/test runs this with FERRY_IMAGE set).

- A store container (``ferry store``), a daemon container over it and a training container (the image's python3
  with the client) reading a job's samples through the daemon for two epochs; the four numbers read from the
  daemon's status.
- Two daemon containers on one podman network under one network alias, found as a group through DNS (aardvark-dns
  answers the alias with both addresses, as a headless Service's name does); the warm Job of
  deploy/kubernetes/examples/warm, played as a Pod, has each member load the objects it owns, and a read of them all
  through one member afterwards fetches nothing more from the store.
- The release tarball (scripts/release) unpacked in a container whose only Java is a JRE (the image's jlink runtime)
  and run from a symlink on PATH: ``ferry demo --quick``, then ``ferry serve``.
- The Kubernetes kit's DaemonSet, rendered by ``kubectl kustomize deploy/kubernetes`` and played as a Pod with
  ``podman kube play``: its init container, its ConfigMap, its probes and its preStop flush.

podman 4.3 (Debian 12's) leaves some of a kubelet's work undone; what the kit's Pod is given in its place is in
:func:`pod_of_daemonset`, each change named there. Nothing here reaches beyond this machine.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
IMAGE = os.environ.get("FERRY_IMAGE", "")
PORT = 9099
KEYS = {"FERRY_ACCESS_KEY": "ferry-test", "FERRY_SECRET_KEY": "ferry-test-secret",
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}

# The training container's job: puts a small dataset in the store (as a user uploads a corpus), registers a job of
# its objects with the daemon, reads two epochs in plan order with the client's loader, and prints the job's rows.
TRAIN = """
import json, os
from ferry_client import FerryClient, StepReporter
from ferry_client.loader import Samples
from ferry_client.s3 import S3Client

objects, size = int(os.environ["OBJECTS"]), int(os.environ["OBJECT_BYTES"])
keys = [f"shards/s{i:03d}" for i in range(objects)]
if os.environ.get("UPLOAD"):
    store = S3Client(os.environ["STORE"], "testing", "testing")
    for i, key in enumerate(keys):
        store.put("train", key, bytes([i % 251]) * size)
    raise SystemExit(0)
client = FerryClient()   # FERRY_ENDPOINT and FERRY_ACCESS_KEY/FERRY_SECRET_KEY, as in a training pod
job = os.environ["JOB"]
client.register_job(job, ranks=[["train/" + k for k in keys]], batch_size=1)
read = []
for epoch in range(1, int(os.environ["EPOCHS"]) + 1):
    with StepReporter(client, job, 0, epoch=epoch, batch_size=1, ranks=1) as steps:
        # timed: the daemon is told the epoch began before its first read, and each sample's wait is a step's
        for data in steps.timed(Samples(client, job, epoch=epoch)):
            read.append(len(data) == size and data[:1] == data[-1:])
print(json.dumps({"read": len(read), "whole": all(read),
                  "jobs": [j for j in client.status()["jobs"] if j["job"] == job]}))
"""


class Podman:
    """podman with ferry's containers.conf (runc, the ulimits), and everything it made removed at the end."""

    def __init__(self):
        self.env = dict(os.environ, CONTAINERS_CONF=os.path.join(ROOT, "deploy", "podman", "containers.conf"))
        self.tag = f"ferry-test-{os.getpid()}"
        self.containers, self.networks = [], []
        self.workdir = tempfile.mkdtemp(prefix=f"{self.tag}-")

    def __call__(self, *args, check=True, timeout=300, input=None):
        # run in an empty folder: kube play takes a folder named as an image in its working folder for a build
        # context (the repository's root has the launcher ./ferry)
        r = subprocess.run(["podman", *args], capture_output=True, text=True, env=self.env, timeout=timeout,
                           input=input, check=False, cwd=self.workdir)
        if check and r.returncode != 0:
            raise AssertionError(f"podman {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        return r

    def network(self):
        name = f"{self.tag}-{len(self.networks)}"
        self("network", "create", name)
        self.networks.append(name)
        subnet = self("network", "inspect", name, "--format", "{{range .Subnets}}{{.Subnet}} {{end}}").stdout.split()[0]
        prefix = subnet.split("/")[0].rsplit(".", 1)[0]   # podman's networks are /24s
        return name, prefix

    def start(self, name, *args, entrypoint=None):
        """A detached container named ``name`` (prefixed with this run's tag) from the image."""
        name = f"{self.tag}-{name}"
        cmd = ["run", "-d", "--name", name]
        if entrypoint:
            cmd += ["--entrypoint", entrypoint]
        self(*cmd, *args)
        self.containers.append(name)
        return name

    def ready(self, name, timeout_s=120):
        """Waits for the 'ready' line a ferry daemon or store prints once it listens."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            logs = self("logs", name, check=False)
            text = logs.stdout + logs.stderr
            if re.search(r"^ready|^ferry store: serving", text, re.MULTILINE):
                return text
            if self("inspect", name, "--format", "{{.State.Running}}", check=False).stdout.strip() == "false":
                raise AssertionError(f"{name} exited before it was ready:\n{text}")
            time.sleep(0.3)
        raise AssertionError(f"{name} not ready in {timeout_s} s:\n{self('logs', name, check=False).stderr}")

    def clean(self):
        for name in reversed(self.containers):
            self("rm", "-f", "-t", "2", name, check=False)
        for name in self.networks:
            self("network", "rm", "-f", name, check=False)
        shutil.rmtree(self.workdir, ignore_errors=True)


def daemon_args(store_url, *extra, cache_size="256MiB"):
    env = []
    for k, v in KEYS.items():
        env += ["-e", f"{k}={v}"]
    return [*env, IMAGE, "serve", "--bind", "0.0.0.0", "--upstream", store_url, "--cache-dir", "/var/lib/ferry/cache",
            "--cache-size", cache_size, *extra]


def status(ip):
    """A daemon's status, read from the host as a probe reads it (the path needs no signature)."""
    with urllib.request.urlopen(f"http://{ip}:{PORT}/_ferry/v1/status", timeout=10) as r:
        return json.load(r)


def until(check, timeout_s=60, what="the condition"):
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except (OSError, urllib.error.URLError) as e:
            last = e
        time.sleep(0.5)
    raise AssertionError(f"{what} did not hold in {timeout_s} s (last: {last!r})")


def expand(arg, env):
    """``$(VAR)`` in a container's argument replaced by the variable's value, as the kubelet does."""
    return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), arg)


def pod_of_daemonset(rendered, image, store_url, pod_ip, nvme, prefix):
    """The kit's rendered ConfigMap and its DaemonSet's pod template as a Pod podman 4.3 plays, and the Pod.

    Each change stands for what a kubelet (or the cluster) does that podman 4.3 does not, or for this machine:
    - the pod template becomes a Pod (kube play takes Pod and Deployment, not DaemonSet), without the GPU
      nodeSelector and toleration (no scheduler here) and the CPU request (this machine has 2 cores);
    - the image is the one just built; the ConfigMap's upstream is the store container, its sizes this disk's;
    - env from a Secret or the downward API (status.podIP) becomes the value the kubelet would give it (podman 4.3
      refuses fieldRef status.podIP), and $(VAR) in args is expanded as the kubelet expands it (podman passes it on);
    - a probe's named port becomes its number (podman 4.3 turns an httpGet probe into curl with port 0 otherwise);
    - the init container is kept after it runs (annotation init.container.type always: podman 4.3 races removing a
      'once' init container that has just exited, https://github.com/containers/podman/issues/18477);
    - the NVMe hostPath is a temporary folder, and the Pod's name starts with ``prefix`` (runs side by side).
    """
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    daemonset = next(d for d in docs if d["kind"] == "DaemonSet")
    settings = yaml.safe_load(config["data"]["ferry.yaml"])
    settings.update({"upstream": store_url, "cache-size": "1GiB", "write-back-quota": "256MiB"})
    config["data"]["ferry.yaml"] = yaml.safe_dump(settings)
    config["metadata"].pop("namespace", None)
    template = daemonset["spec"]["template"]
    spec = template["spec"]
    spec.pop("nodeSelector", None)
    spec.pop("tolerations", None)
    given = dict(KEYS, POD_IP=pod_ip)
    for c in spec.get("initContainers", []) + spec["containers"]:
        c["image"] = image
        c.get("resources", {}).pop("requests", None)
        for e in c.get("env", []):
            if "valueFrom" in e:
                e.pop("valueFrom")
                e["value"] = given[e["name"]]
        c["args"] = [expand(a, {e["name"]: e.get("value", "") for e in c.get("env", [])}) for a in c.get("args", [])]
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", []) if "name" in p}
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            get = c.get(probe, {}).get("httpGet")
            if get and isinstance(get["port"], str):
                get["port"] = ports[get["port"]]
    for v in spec["volumes"]:
        if "hostPath" in v:
            v["hostPath"]["path"] = nvme
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": f"{prefix}-{daemonset['metadata']['name']}", "labels": template["metadata"]["labels"],
                        "annotations": {"io.podman.annotations.init.container.type": "always"}},
           "spec": spec}
    return [config, pod], pod


@unittest.skipUnless(IMAGE or os.environ.get("FERRY_REQUIRE_REAL_CLIENTS"), "FERRY_IMAGE not set (scripts/image)")
class ImageTest(unittest.TestCase):
    OBJECTS, OBJECT_BYTES = 48, 256 * 1024

    @classmethod
    def setUpClass(cls):
        if not IMAGE:
            raise AssertionError("FERRY_IMAGE is not set: scripts/test builds the image with scripts/image first")
        cls.podman = Podman()
        try:
            cls.net, cls.prefix = cls.podman.network()
            # the store: ferry's embedded S3 server, its bucket a folder under --root
            cls.store = cls.podman.start(
                "store", "--network", cls.net, IMAGE, "-c",
                "mkdir -p /var/lib/ferry/store/train && exec ferry store --root /var/lib/ferry/store --bind 0.0.0.0 "
                "--profile none", entrypoint="sh")
            cls.podman.ready(cls.store)
            cls.store_url = f"http://{cls.store}:9000"
            cls.run_train({"UPLOAD": "1", "STORE": cls.store_url})   # the dataset, as a user uploads a corpus
        except BaseException:
            cls.podman.clean()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.podman.clean()

    @classmethod
    def run_train(cls, env):
        """The training container's script with ``env``; its output."""
        env = {"OBJECTS": str(cls.OBJECTS), "OBJECT_BYTES": str(cls.OBJECT_BYTES), **env}
        args = ["run", "--rm", "--network", cls.net, "--entrypoint", "python3"]
        for k, v in env.items():
            args += ["-e", f"{k}={v}"]
        return cls.podman(*args, IMAGE, "-c", TRAIN)

    def train(self, daemon, job, epochs):
        """Runs the training container against ``daemon`` (a container name) and returns its answer."""
        r = self.run_train({"FERRY_ENDPOINT": f"http://{daemon}:{PORT}", "JOB": job, "EPOCHS": str(epochs),
                            "FERRY_ACCESS_KEY": KEYS["FERRY_ACCESS_KEY"], "FERRY_SECRET_KEY": KEYS["FERRY_SECRET_KEY"]})
        answer = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertEqual(answer["read"], self.OBJECTS * epochs, r.stderr)
        self.assertTrue(answer["whole"], "a sample came back with other bytes than were put")
        return answer

    def test_a_training_container_reads_through_a_daemon_container_and_the_four_numbers_say_so(self):
        daemon = self.podman.start("daemon", "--network", self.net, *daemon_args(self.store_url))
        self.podman.ready(daemon)
        answer = self.train(daemon, "through-containers", epochs=2)
        (row,) = answer["jobs"]
        epochs = {e["epoch"]: e for e in row["epochs"]}
        dataset = self.OBJECTS * self.OBJECT_BYTES
        # the four numbers, per epoch: samples/s, wait per step, local-tier hit rate, egress (with its cost)
        for e in epochs.values():
            for number in ("samples_per_s", "wait_per_step_ms_p50", "local_hit_rate", "egress_bytes",
                           "egress_cost_usd"):
                self.assertIn(number, e)
            self.assertGreater(e["samples_per_s"], 0)
        for e in epochs.values():
            self.assertEqual(e["read_bytes"], dataset, f"each epoch's reads are its own: {e}")
        self.assertEqual(epochs[1]["egress_bytes"], dataset, "the dataset crosses from the store once")
        self.assertEqual(epochs[2]["egress_bytes"], 0)
        self.assertEqual(epochs[2]["local_hit_rate"], 1.0, epochs[2])
        self.assertGreater(epochs[1]["egress_cost_usd"], 0)

    def test_two_daemon_containers_find_each_other_through_one_network_alias(self):
        alias = f"{self.podman.tag}-peers"
        ips = [f"{self.prefix}.{n}" for n in (21, 22)]
        names = []
        for n, ip in enumerate(ips):
            names.append(self.podman.start(
                f"member{n}", "--network", self.net, "--ip", ip, "--network-alias", alias,
                *daemon_args(self.store_url, "--group", f"dns:{alias}:{PORT}", "--self", f"http://{ip}:{PORT}")))
        for name in names:
            self.podman.ready(name)
        urls = {f"http://{ip}:{PORT}" for ip in ips}

        def both_see_both():
            return all({m["url"] for m in status(ip)["group"]["members"] if m["state"] == "up"} == urls for ip in ips)
        until(both_see_both, what="both members found through the alias")
        for ip in ips:
            self.assertEqual(status(ip)["group"]["self"], f"http://{ip}:{PORT}")

        # the example's warm Job, played as a Pod against the first member: each member loads the share it owns
        job = self.warm_job_pod(f"http://{names[0]}:{PORT}", "s3://train/shards/")
        self.podman("kube", "play", "--network", self.net, job)
        self.addCleanup(self.podman, "kube", "down", job, check=False)
        warm = f"{self.podman.tag}-warm-warm"
        exit_code = self.podman("wait", warm, timeout=600).stdout.strip()
        log = self.podman("logs", warm)
        self.assertEqual(exit_code, "0", log.stdout + log.stderr)
        self.assertIn("on 2 members", log.stdout)
        first, second = (status(ip)["tiers"] for ip in ips)
        dataset = self.OBJECTS * self.OBJECT_BYTES
        warmed = first["origin"]["egress_bytes"] + second["origin"]["egress_bytes"]
        self.assertEqual(warmed, dataset, "each object is fetched from the store once, by its owner")
        self.assertGreater(second["origin"]["egress_bytes"], 0, "the second member owns some of the objects")
        self.assertEqual(first["local"]["resident_bytes"] + second["local"]["resident_bytes"], dataset,
                         "the members hold the dataset between them, each its share")

        # epoch 1 through the first member: its share from its tier, the rest from the second member's
        self.train(names[0], "through-a-group", epochs=1)
        first, second = (status(ip)["tiers"] for ip in ips)
        self.assertEqual(first["origin"]["egress_bytes"] + second["origin"]["egress_bytes"], warmed,
                         "nothing more from the store")
        self.assertEqual(first["peer"]["bytes"], second["origin"]["egress_bytes"],
                         "what the second member owns reached the first through it")

    def warm_job_pod(self, url, location):
        """deploy/kubernetes/examples/warm's Job as a Pod podman 4.3 plays (it plays no Job): its pod template with
        the Secret's keys as values, the daemon's URL and the location given (no Service routing here)."""
        rendered = subprocess.run(["kubectl", "kustomize", os.path.join(ROOT, "deploy", "kubernetes", "examples", "warm")],
                                  capture_output=True, text=True, check=True, timeout=120).stdout
        job = next(d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "Job")
        spec = job["spec"]["template"]["spec"]
        spec["restartPolicy"] = "Never"
        (c,) = spec["containers"]
        c["image"] = IMAGE
        args = c["args"]
        self.assertEqual(args[:3], ["warm", "--group", "--url"])
        args[3], args[-1] = url, location
        for e in c["env"]:
            e["value"] = KEYS[e.pop("valueFrom") and e["name"]]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{self.podman.tag}-warm"}, "spec": spec}
        path = os.path.join(tempfile.gettempdir(), f"{self.podman.tag}-warm.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(pod, f)
        self.addCleanup(os.remove, path)
        return path

    def test_the_release_runs_from_a_symlink_on_path_where_the_only_java_is_a_jre(self):
        out = tempfile.mkdtemp(prefix="ferry-release-")
        self.addCleanup(shutil.rmtree, out, True)
        built = subprocess.run([os.path.join(ROOT, "scripts", "release"), out], capture_output=True, text=True,
                               timeout=900, check=False)
        self.assertEqual(built.returncode, 0, built.stderr)
        tarball = built.stdout.strip().splitlines()[-1]
        # the image's runtime is a JRE (jlink, no javac); the release is unpacked as a user unpacks it, under their
        # home, and run through a symlink on PATH, with neither JAVA_HOME nor the image's launcher
        script = (
            "set -e; test ! -e /opt/ferry/jre/bin/javac; unset JAVA_HOME; cd $HOME; "
            "tar -xzf /release.tar.gz; mkdir -p bin; ln -s $HOME/ferry-*/bin/ferry bin/ferry; "
            "export PATH=$HOME/bin:/usr/bin:/bin:/opt/ferry/jre/bin; command -v ferry; "
            "ferry demo --quick; "
            "ferry serve --cache-dir $HOME/cache --data-dir $HOME/data --port 9099 > serve.log 2>&1 & pid=$!; "
            "for i in $(seq 1 100); do grep -q '^ready' serve.log && break; sleep 0.2; done; "
            "curl -sf http://127.0.0.1:9099/_ferry/v1/status > /dev/null && echo SERVED; kill $pid")
        r = self.podman("run", "--rm", "-e", "HOME=/var/lib/ferry", "-v", f"{tarball}:/release.tar.gz:ro",
                        "--entrypoint", "sh", IMAGE, "-c", script, timeout=600)
        self.assertIn("/var/lib/ferry/bin/ferry", r.stdout)
        self.assertIn("found: through ferry the accelerator was busy", r.stdout, r.stdout + r.stderr)
        self.assertTrue(r.stdout.rstrip().endswith("SERVED"), r.stdout + r.stderr)

    def test_the_kits_daemonset_plays_as_a_pod_with_its_configmap_probes_and_prestop_flush(self):
        rendered = subprocess.run(["kubectl", "kustomize", os.path.join(ROOT, "deploy", "kubernetes")],
                                  capture_output=True, text=True, check=True, timeout=120).stdout
        nvme = tempfile.mkdtemp(prefix="ferry-nvme-")
        self.addCleanup(shutil.rmtree, nvme, True)
        ip = f"{self.prefix}.30"
        docs, pod = pod_of_daemonset(rendered, IMAGE, self.store_url, ip, nvme, self.podman.tag)
        path = os.path.join(nvme, "..", f"{os.path.basename(nvme)}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump_all(docs, f, sort_keys=False)
        self.addCleanup(os.remove, path)
        self.podman("kube", "play", "--replace", "--network", self.net, "--ip", ip, path)
        self.addCleanup(self.podman, "kube", "down", path, check=False)
        name = f"{pod['metadata']['name']}-{pod['spec']['containers'][0]['name']}"
        self.podman.ready(name)
        container = pod["spec"]["containers"][0]

        # the init container ran: the hostPath is the daemon's user's
        self.assertEqual(os.stat(nvme).st_uid, 10001)
        # the probes, as a kubelet sends them
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            get = container[probe]["httpGet"]
            with urllib.request.urlopen(f"http://{ip}:{get['port']}{get['path']}", timeout=10) as r:
                self.assertEqual(r.status, 200, probe)
        # and podman's own form of the liveness probe, in the container
        self.podman("healthcheck", "run", name)
        # the ConfigMap read: its upstream and its sizes
        s = status(ip)
        self.assertEqual(s["daemon"]["upstream"], self.store_url)
        self.assertEqual(s["tiers"]["local"]["capacity_bytes"], 1 << 30)
        self.assertEqual(s["daemon"]["block_size"], 4 << 20)

        # preStop: the write-back fence. An acknowledged write while the store does not answer stays pending, and
        # the flush says so (exit 1); once the store answers, the flush returns when the write is in it.
        self.podman("pause", self.store)
        try:
            put = self.podman("exec", name, "python3", "-c",
                              "from ferry_client import FerryClient\n"
                              f"r = FerryClient('http://127.0.0.1:{PORT}').put('train', 'ckpt/step-1', b'x' * 4096)\n"
                              "print(r['durability'])")
            self.assertEqual(put.stdout.strip(), "local")
            flush = container["lifecycle"]["preStop"]["exec"]["command"]
            short = [a if a != "300s" else "3s" for a in flush]
            early = self.podman("exec", name, *short, check=False)
            self.assertEqual(early.returncode, 1, early.stdout + early.stderr)
        finally:
            self.podman("unpause", self.store)
        done = self.podman("exec", name, *flush, check=False)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        stored = self.podman("exec", self.store, "curl", "-s", "http://127.0.0.1:9000/train/ckpt/step-1", check=False)
        self.assertEqual(stored.stdout, "x" * 4096, "the write is in the store once the preStop flush returns")
        self.podman("kube", "down", path)


if __name__ == "__main__":
    unittest.main()
