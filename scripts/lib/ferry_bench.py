"""What the Python benchmark scripts (bench-checkpoint, bench-torch, bench-warm) share: a free port on loopback, and
a ferry process (store, daemon, mount) run from the repository's ./ferry with its output in a log file."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

FERRY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "ferry")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url):
    """A readiness check: ``url`` answers, if only with an error."""
    def ready():
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            return False
    return ready


def tail(log):
    with open(log, errors="replace") as f:
        return f.read()[-2000:]


class Process:
    """``ferry ARGS`` whose output goes to ``log``, up once ``ready()`` (or exited: the script stops, naming why);
    stopped with SIGTERM, then SIGKILL after a minute."""

    def __init__(self, args, log, ready):
        self.log = log
        script = os.path.basename(sys.argv[0])
        with open(log, "wb") as out:
            self.proc = subprocess.Popen([FERRY, *args], stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{script}: ferry {args[0]} exited: {tail(log)}")
            if ready():
                return
            time.sleep(0.2)
        self.stop()
        raise SystemExit(f"{script}: ferry {args[0]} did not come up: {tail(log)}")

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
