"""The client as users install it: a wheel built with ``python -m build``, carrying the one version number and the
type hints (``py.typed``), installed into a fresh venv, running the README's Python example unchanged against a live
daemon (from outside the source tree, so the import is the wheel's)."""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
import zipfile

import ferry_client

import support

# The README's example, as a user pastes it, with what it leaves to the reader (the decode, the train step, the epoch)
EXAMPLE = textwrap.dedent("""
    import json, sys
    from torch.utils.data import DataLoader
    import ferry_client
    from ferry_client import FerryClient, StepReporter, placement
    from ferry_client.torch import FerryIterableDataset

    def decode_sample(data):
        return len(data)

    def train_step(batch):
        pass

    epoch = 1
    client = FerryClient()                    # FERRY_ENDPOINT, else the node's daemon on http://127.0.0.1:9099
    job = client.register_job("resnet", manifest_key="my-bucket/train/manifest.json", seed=7, batch_size=32)
    data = FerryIterableDataset(client.url, "resnet", epoch, decode=decode_sample)   # this rank's samples
    seen = 0
    with StepReporter(client, "resnet", placement().rank, epoch=epoch, batch_size=32, ranks=job["ranks"]) as steps:
        for batch in steps.timed(DataLoader(data, batch_size=32, num_workers=4)):   # batches in plan order
            train_step(batch)                                                     # waits land in the four numbers
            seen += len(batch)
    print(json.dumps({"module": ferry_client.__file__, "samples": seen, "expected": job["samples"]}))
""")


class WheelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        support.require("build", "python -m build makes the wheel (scripts/requirements-test.txt)")
        cls.dir = tempfile.mkdtemp(prefix="ferry-wheel-")
        cls.wheel = None

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_ok(self, *command, **kw):
        r = subprocess.run(command, capture_output=True, text=True, timeout=600, **kw)
        self.assertEqual(r.returncode, 0, f"{' '.join(command)}:\n{r.stdout}\n{r.stderr}")
        return r.stdout

    def built_wheel(self):
        """The wheel, built once for the class."""
        if type(self).wheel is None:
            dist = os.path.join(self.dir, "dist")
            # --no-isolation: the build backend (setuptools) is the one installed; there may be no index to fetch it
            self.run_ok(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist, support.CLIENT_ROOT)
            wheels = glob.glob(os.path.join(dist, "ferry_client-*.whl"))
            self.assertEqual(len(wheels), 1, os.listdir(dist))
            type(self).wheel = wheels[0]
        return type(self).wheel

    def test_the_wheel_carries_the_one_version_and_the_type_hints(self):
        wheel = self.built_wheel()
        version = ferry_client.__version__  # the one place the version is written (pyproject.toml reads it)
        self.assertEqual(os.path.basename(wheel), f"ferry_client-{version}-py3-none-any.whl")
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
            metadata = z.read(f"ferry_client-{version}.dist-info/METADATA").decode()
        self.assertIn(f"\nVersion: {version}\n", metadata)
        for module in ("py.typed", "__init__.py", "s3.py", "client.py", "settings.py", "answers.py", "torch.py"):
            self.assertIn(f"ferry_client/{module}", names)

    def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_readme_example(self):
        support.require("torch", "the README's example runs a DataLoader")
        support.require("boto3", "the manifest is put in the bucket with boto3, as the README does with awscli")
        wheel = self.built_wheel()
        venv = os.path.join(self.dir, "venv")
        # the venv sees the system's torch and boto3 (large, and the example's, not the client's, dependencies)
        self.run_ok(sys.executable, "-m", "venv", "--system-site-packages", venv)
        python = os.path.join(venv, "bin", "python")
        self.run_ok(python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", wheel)

        # a daemon over a folder of 200 objects, indexed and the manifest put in the bucket as the README says
        store = os.path.join(self.dir, "store")
        os.makedirs(os.path.join(store, "my-bucket", "train"))
        for i in range(200):
            with open(os.path.join(store, "my-bucket", "train", f"{i:05d}.bin"), "wb") as f:
                f.write(os.urandom(2000 + i))
        daemon = support.FerryDaemon(store, os.path.join(self.dir, "cache"))
        try:
            env = dict(os.environ, AWS_ACCESS_KEY_ID="ferry", AWS_SECRET_ACCESS_KEY="ferry", FERRY_ENDPOINT=daemon.url)
            env.pop("PYTHONPATH", None)
            manifest = os.path.join(self.dir, "manifest.json")
            self.run_ok(os.path.join(support.REPO_ROOT, "ferry"), "index", "s3://my-bucket/train/", "-o", manifest,
                        "--endpoint", daemon.url, env=env)
            import boto3
            s3 = boto3.client("s3", endpoint_url=daemon.url, aws_access_key_id="ferry", aws_secret_access_key="ferry",
                              region_name="us-east-1")
            s3.upload_file(manifest, "my-bucket", "train/manifest.json")
            script = os.path.join(self.dir, "example.py")
            with open(script, "w") as f:
                f.write(EXAMPLE)
            out = self.run_ok(python, script, env=env, cwd=self.dir)  # outside the source tree
        finally:
            daemon.stop()
        result = json.loads(out.strip().splitlines()[-1])
        self.assertTrue(result["module"].startswith(os.path.realpath(venv)) or result["module"].startswith(venv),
                        f"ferry_client came from {result['module']}, not the venv")
        self.assertEqual(result["samples"], result["expected"])
        self.assertEqual(result["samples"], 200)  # one sample per object (the manifest was put there after indexing)


if __name__ == "__main__":
    unittest.main()
