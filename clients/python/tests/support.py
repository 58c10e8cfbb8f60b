"""Test support: real S3 servers (moto's) and real ferry daemons in subprocesses.

The tests import ``ferry_client`` as installed (``pip install -e clients/python``, which scripts/test does), never
from a path of this tree: what they import is what a user's training script imports.
"""

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

CLIENT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# As in the Java tests: with FERRY_REQUIRE_REAL_CLIENTS=1 a missing server fails the run instead of skipping.
REQUIRE_REAL = os.environ.get("FERRY_REQUIRE_REAL_CLIENTS") == "1"


def require(module, why):
    """Skips the calling test class when ``module`` is not installed (fails under FERRY_REQUIRE_REAL_CLIENTS=1)."""
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed: {why}"
        if REQUIRE_REAL:
            raise RuntimeError(message)
        raise unittest.SkipTest(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MotoServer:
    """``python3 -m moto.server`` on a free port of 127.0.0.1, stopped by ``stop()``.

    ``no_auth_actions`` turns on moto's signature and IAM checks after that many requests
    (moto's ``INITIAL_NO_AUTH_ACTION_COUNT``).
    """

    def __init__(self, no_auth_actions=None):
        require("moto", "the S3 tests run against moto's real S3 server (pip install 'moto[server]')")
        require("boto3", "the S3 tests set up buckets with boto3")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ)
        if no_auth_actions is not None:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(no_auth_actions)
        self._log = tempfile.TemporaryFile()  # noqa: SIM115  (the server's log, closed by stop())
        self._process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                                          str(self.port)], stdout=self._log, stderr=subprocess.STDOUT, env=env)
        self._wait_ready()

    def _wait_ready(self, timeout_s=60):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"moto.server exited with {self._process.returncode}: {self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/moto-api/", timeout=2):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto.server did not answer on {self.url} within {timeout_s} s: {self.log()}")

    def log(self):
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-2000:]

    def boto3(self, service="s3", access_key="testing", secret_key="testing"):
        import boto3
        from botocore.config import Config
        try:  # botocore >= 1.36 adds CRC32 trailers moto's signature check does not expect
            config = Config(request_checksum_calculation="when_required", s3={"addressing_style": "path"})
        except TypeError:
            config = Config(s3={"addressing_style": "path"})
        return boto3.client(service, endpoint_url=self.url, region_name="us-east-1",
                            aws_access_key_id=access_key, aws_secret_access_key=secret_key, config=config)

    def stop(self):
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()


REPO_ROOT = os.path.dirname(os.path.dirname(CLIENT_ROOT))


class FerryDaemon:
    """A real ``ferry serve`` (the repository's ``./ferry`` launcher, which builds the CLI first when it is missing
    or older than the sources) over the folder ``store_root`` on a free port of 127.0.0.1, stopped by ``stop()``.

    Without a JDK 21+ and Maven the launcher cannot build: the calling test class is skipped (fails under
    FERRY_REQUIRE_REAL_CLIENTS=1).
    """

    def __init__(self, store_root, cache_dir, *args, timeout_s=900, port=None, upstream=None, env=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.TemporaryFile()  # noqa: SIM115  (the daemon's log, closed by stop())
        below = ["--upstream", upstream] if upstream else ["--store-root", store_root, "--create"]
        command = [os.path.join(REPO_ROOT, "ferry"), "serve", *below, "--cache-dir", cache_dir,
                   "--port", str(self.port), "--cache-size", "256MiB", "--block-size", "1MiB", *args]
        # its own session: a launcher still building is stopped with its Maven
        self._process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
                                         env=None if env is None else {**os.environ, **env})
        self._wait_ready(timeout_s)

    def _wait_ready(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                message = f"ferry serve exited with {self._process.returncode}: {self.log()}"
                self._log.close()
                if REQUIRE_REAL:
                    raise RuntimeError(message)
                raise unittest.SkipTest(message)
            try:
                with urllib.request.urlopen(self.url + "/_ferry/v1/status", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"ferry serve did not answer on {self.url} within {timeout_s} s")

    def log(self):
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-3000:]

    def kill(self):
        """``kill -9`` of the daemon (and its launcher): no shutdown, no flush, as a preempted node."""
        if self._process.poll() is None:
            os.killpg(self._process.pid, 9)
            self._process.wait()

    def stop(self):
        if self._process.poll() is None:
            os.killpg(self._process.pid, 15)
            try:
                self._process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self._process.pid, 9)
                self._process.wait()
        if not self._log.closed:
            self._log.close()
