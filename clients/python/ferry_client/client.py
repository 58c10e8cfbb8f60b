"""FerryClient: S3 reads and writes through the ferry daemon, and ferry's own JSON API (``/_ferry/v1``).

One keep-alive connection per thread (and per process: a forked child opens its own), reconnected
once when the server dropped it. Every request is signed with AWS Signature V4 when keys are given.
"""

import hashlib
import http.client
import json
import os
import socket
import threading
import weakref
from urllib.parse import urlsplit

from .errors import FerryConnectionError, FerryError, error_from_response
from .placement import placement
from .sigv4 import EMPTY_SHA256, Signer, canonical_query, uri_encode

DEFAULT_URL = "http://127.0.0.1:9099"
ENDPOINT_VARIABLE = "FERRY_ENDPOINT"
_API = "/_ferry/v1/"
_HASH_CHUNK = 1 << 20
# The server closed a kept-alive connection: safe to send again on a new one.
# (http.client.RemoteDisconnected is both a ConnectionResetError and a BadStatusLine.)
_DROPPED = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, http.client.BadStatusLine)
_USE_DEFAULT = object()


def _quote_etag(etag):
    """``If-Match`` wants the ETag in double quotes, as S3 sends it; add them when missing."""
    etag = str(etag)
    if etag == "*" or etag.startswith('"') or etag.startswith("W/"):
        return etag
    return f'"{etag}"'


def _range_header(offset, length):
    """The ``Range`` header for ``length`` bytes from ``offset`` (either may be None), or None for all."""
    for name, value in (("offset", offset), ("length", length)):
        if value is not None and (not isinstance(value, int) or value < 0):
            raise ValueError(f"{name} must be a non-negative integer, not {value!r}.")
    if length is None:
        return f"bytes={offset}-" if offset else None
    start = offset or 0
    return f"bytes={start}-{start + length - 1}"


def default_url():
    """The daemon a client talks to when given no URL: ``FERRY_ENDPOINT`` when set (on Kubernetes, the node-local
    Service), else the node's own daemon on ``http://127.0.0.1:9099``."""
    value = os.environ.get(ENDPOINT_VARIABLE, "").strip()
    return value or DEFAULT_URL


def _world(world):
    """``(nodes, ranks_per_node, workers_per_rank)`` or a dict with those keys, as the daemon's JSON."""
    names = ("nodes", "ranks_per_node", "workers_per_rank")
    if isinstance(world, dict):
        values = [world.get(n) for n in names]
    else:
        values = list(world)
    if len(values) != 3 or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError("world must be three positive integers (nodes, ranks_per_node, workers_per_rank), "
                         f"not {world!r}.")
    return dict(zip(names, values))


def _resume(resume):
    """A checkpoint from :meth:`FerryClient.checkpoint` (or the ``homes`` of a registration's answer, as
    ``{"homes": ...}``), checked for its shape; the daemon checks that it fits the job."""
    if not isinstance(resume, dict):
        raise ValueError(f"resume must be the dict FerryClient.checkpoint returned, not {type(resume).__name__}.")
    if not isinstance(resume.get("homes"), dict):
        raise ValueError("resume has no homes: pass the dict FerryClient.checkpoint returned for a node-partition job.")
    return {k: resume[k] for k in ("epoch", "position", "canonical_nodes", "homes", "round_homes") if resume.get(k) is not None}


def _load_manifest(manifest):
    """An inline manifest: a dict as it is, or a path to the JSON file ``ferry index`` wrote."""
    if isinstance(manifest, dict):
        return manifest
    if isinstance(manifest, (str, os.PathLike)):
        with open(manifest, "rb") as f:
            return json.load(f)
    raise TypeError(f"manifest must be a dict or the path of a manifest file, not {type(manifest).__name__}.")


def _prepare_body(data, want_hash):
    """Returns ``(body, length, sha256 hex)`` for bytes, a binary file, or None (no body)."""
    if data is None:
        return None, 0, EMPTY_SHA256
    if isinstance(data, str):
        raise TypeError("The body must be bytes or a binary file, not str: encode it first.")
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        return data, len(data), hashlib.sha256(data).hexdigest() if want_hash else EMPTY_SHA256
    if not (hasattr(data, "read") and hasattr(data, "seek") and hasattr(data, "tell")):
        raise TypeError(f"The body must be bytes or a seekable binary file, not {type(data).__name__}.")
    start = data.tell()
    digest = hashlib.sha256()
    length = 0
    while True:
        chunk = data.read(_HASH_CHUNK)
        if not chunk:
            break
        if isinstance(chunk, str):
            raise TypeError("The body file must be opened in binary mode ('rb').")
        length += len(chunk)
        if want_hash:
            digest.update(chunk)
    data.seek(start)
    return data, length, digest.hexdigest() if want_hash else EMPTY_SHA256


def samples_of(spans):
    """The samples of an order's spans (:meth:`FerryClient.order_spans`), one dict per sample, in order."""
    out = []
    for span in spans:
        for index, offset, length in span["samples"]:
            out.append({"index": index, "bucket": span["bucket"], "key": span["key"], "offset": offset,
                        "length": length, "etag": span.get("etag")})
    return out


def spans_of(samples):
    """Sample dicts in order, cut into spans as the daemon does: runs of consecutive samples of one object (the
    same bucket, key and ETag), each with the range that covers its samples. A sample without ``offset`` or
    ``length`` (a whole object) keeps None there, and so does its span."""
    spans = []
    for sample in samples:
        where = (sample["bucket"], sample["key"], sample.get("etag"))
        entry = [sample.get("index"), sample.get("offset"), sample.get("length")]
        last = spans[-1] if spans else None
        if last is not None and (last["bucket"], last["key"], last.get("etag")) == where:
            last["samples"].append(entry)
        else:
            last = {"bucket": where[0], "key": where[1], "etag": where[2], "samples": [entry]}
            spans.append(last)
    for span in spans:
        ranges = [(o, n) for _, o, n in span["samples"]]
        if all(o is not None and n is not None for o, n in ranges):
            span["offset"] = min(o for o, _ in ranges)
            span["length"] = max(o + n for o, n in ranges) - span["offset"]
        else:
            span["offset"] = span["length"] = None
    return spans


class _ThreadConnection:
    """One thread's connection; closed when the thread ends (its threading.local data goes with it)."""

    __slots__ = ("conn",)

    def __init__(self, conn):
        self.conn = conn

    def __del__(self):
        try:
            self.conn.close()
        except Exception:  # at interpreter exit the socket module may be gone already
            pass


class FerryClient:
    """A client of the ferry daemon: S3 object reads and writes, and the ``/_ferry/v1`` API.

    ``url`` is the daemon's base URL (path-style S3); without one, ``FERRY_ENDPOINT``, else the node's daemon on
    ``http://127.0.0.1:9099`` (see :func:`default_url`). Give ``access_key`` and ``secret_key`` (or set
    ``FERRY_ACCESS_KEY`` and ``FERRY_SECRET_KEY``) when the daemon checks signatures; every request is
    then signed with AWS Signature V4 for ``region``. ``timeout`` is the socket timeout in seconds.
    A client may be shared by threads: each thread keeps its own connection.
    """

    def __init__(self, url=None, access_key=None, secret_key=None, region="us-east-1", timeout=60):
        given = url is not None
        if not given:
            url = default_url()
        where = "" if given or url == DEFAULT_URL else f" (from {ENDPOINT_VARIABLE})"
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"The daemon URL must look like http://host:port, not {url!r}{where}.")
        if parts.path not in ("", "/") or parts.query:
            raise ValueError(f"The daemon URL must have no path or query (buckets are path-style): {url!r}{where}.")
        access_key = access_key if access_key is not None else os.environ.get("FERRY_ACCESS_KEY")
        secret_key = secret_key if secret_key is not None else os.environ.get("FERRY_SECRET_KEY")
        if bool(access_key) != bool(secret_key):
            raise ValueError("Give both an access key and a secret key (or set both FERRY_ACCESS_KEY and "
                             "FERRY_SECRET_KEY), or neither.")
        self.url = f"{parts.scheme}://{parts.netloc}"
        self.region = region
        self.timeout = timeout
        self._https = parts.scheme == "https"
        self._hostname = parts.hostname
        self._port = parts.port
        self._host = parts.netloc.rpartition("@")[2]
        self._keys = (access_key, secret_key)
        self._signer = Signer(access_key, secret_key, region) if access_key else None
        self._reset_connections()

    # -- connections ---------------------------------------------------------------------------

    def _reset_connections(self):
        self._pid = os.getpid()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open = weakref.WeakSet()  # every thread's connection, for close()

    def _connection(self):
        if self._pid != os.getpid():  # forked: the parent's sockets are not ours to use
            self._reset_connections()
        holder = getattr(self._local, "holder", None)
        if holder is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            holder = _ThreadConnection(cls(self._hostname, self._port, timeout=self.timeout))
            self._local.holder = holder
            with self._lock:
                self._open.add(holder.conn)
        return holder.conn

    def _drop(self, conn):
        conn.close()
        holder = getattr(self._local, "holder", None)
        if holder is not None and holder.conn is conn:
            self._local.holder = None

    def close(self):
        """Closes every connection this client opened (threads reconnect if they are used again)."""
        with self._lock:
            conns = list(self._open)
            self._open = weakref.WeakSet()
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __reduce__(self):  # a pickled client (a DataLoader worker under spawn) reconnects on its own
        return (type(self), (self.url, self._keys[0], self._keys[1], self.region, self.timeout))

    def __repr__(self):
        signed = "signed" if self._signer else "unsigned"
        return f"FerryClient({self.url!r}, {signed}, region={self.region!r})"

    # -- one request ---------------------------------------------------------------------------

    def _request(self, method, path, params=(), headers=None, body=None, timeout=_USE_DEFAULT):
        """Sends one request and returns ``(status, headers, body)``; headers are lower-cased.

        Raises FerryError for any status outside 2xx, FerryConnectionError when no answer came.
        """
        query = canonical_query(params) if params else ""
        target = path + ("?" + query if query else "")
        name = f"{method} {target}"
        sent = {"host": self._host}
        for key, value in (headers or {}).items():
            sent[key.lower()] = value
        body, length, payload_hash = _prepare_body(body, self._signer is not None)
        if body is not None or method in ("PUT", "POST"):
            sent["content-length"] = str(length)
        if self._signer:
            sent.update(self._signer.sign(method, path, params, sent, payload_hash))
        start = body.tell() if hasattr(body, "tell") else None

        for attempt in (1, 2):
            conn = self._connection()
            if timeout is not _USE_DEFAULT:
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
            if start is not None:
                body.seek(start)
            try:
                conn.request(method, target, body=body, headers=sent)
                response = conn.getresponse()
                data = response.read()
            except _DROPPED as e:
                self._drop(conn)
                if attempt == 1:
                    continue
                raise FerryConnectionError(None, "ConnectionDropped",
                                           f"the server at {self.url} closed the connection twice ({e})", name)
            except http.client.IncompleteRead as e:
                self._drop(conn)
                if attempt == 1 and method in ("GET", "HEAD"):
                    continue
                raise FerryConnectionError(None, "IncompleteBody",
                                           f"the answer ended after {len(e.partial)} bytes of its body", name)
            except (socket.timeout, TimeoutError):
                self._drop(conn)
                raise FerryConnectionError(None, "Timeout", f"no answer from {self.url} within {conn.timeout} s",
                                           name)
            except (OSError, http.client.HTTPException) as e:
                self._drop(conn)
                reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
                raise FerryConnectionError(None, "ConnectionFailed", f"cannot talk to {self.url}: {reason}", name)
            finally:
                if timeout is not _USE_DEFAULT:
                    conn.timeout = self.timeout
                    if conn.sock is not None:
                        conn.sock.settimeout(self.timeout)
            reply_headers = {k.lower(): v for k, v in response.getheaders()}
            if 200 <= response.status < 300:
                return response.status, reply_headers, data
            raise error_from_response(response.status, response.reason, data, name)
        raise AssertionError("unreachable")

    # -- S3 ------------------------------------------------------------------------------------

    @staticmethod
    def _object_path(bucket, key):
        if not bucket or not key:
            raise ValueError(f"Both a bucket and a key are needed, not bucket={bucket!r} key={key!r}.")
        return "/" + uri_encode(bucket) + "/" + uri_encode(key, safe="/")

    def get(self, bucket, key, offset=None, length=None, etag=None):
        """The object's bytes, or ``length`` bytes from ``offset`` (a ``Range`` request).

        With ``etag`` the read is conditional (``If-Match``): a changed object raises FerryError 412
        instead of mixing versions. A range past the end returns the bytes that exist.
        """
        if length == 0:
            return b""
        headers = {}
        range_header = _range_header(offset, length)
        if range_header:
            headers["range"] = range_header
        if etag:
            headers["if-match"] = _quote_etag(etag)
        status, _, data = self._request("GET", self._object_path(bucket, key), headers=headers)
        if range_header and status == 200:  # the server sent the whole object: cut the range here
            start = offset or 0
            data = data[start:] if length is None else data[start:start + length]
        return data

    def head(self, bucket, key):
        """The object's metadata: ``size``, ``etag``, ``last_modified``, ``content_type``, ``durability``
        (ferry's ``x-ferry-durability``, None from other servers) and every response header in ``headers``."""
        _, headers, _ = self._request("HEAD", self._object_path(bucket, key))
        size = headers.get("content-length")
        return {
            "size": int(size) if size is not None else None,
            "etag": headers.get("etag"),
            "last_modified": headers.get("last-modified"),
            "content_type": headers.get("content-type"),
            "durability": headers.get("x-ferry-durability"),
            "headers": headers,
        }

    def put(self, bucket, key, data, content_type=None, write_through=False):
        """Writes an object from bytes or a seekable binary file; returns ``etag``, ``durability`` and ``headers``.

        ``durability`` is the daemon's ``x-ferry-durability``: ``local`` (journaled on the node, uploaded in
        the background: call ``flush()`` to wait for it) or ``durable`` (in the object store).
        ``write_through=True`` asks a write-back daemon to store this object before answering
        (``x-ferry-write: through``).
        """
        headers = {"content-type": content_type} if content_type else {}
        if write_through:
            headers["x-ferry-write"] = "through"
        _, reply, _ = self._request("PUT", self._object_path(bucket, key), headers=headers, body=data)
        return {"etag": reply.get("etag"), "durability": reply.get("x-ferry-durability"), "headers": reply}

    # -- ferry's API ---------------------------------------------------------------------------

    def _api(self, method, path, params=(), payload=None, timeout=_USE_DEFAULT):
        headers = {"accept": "application/json"}
        body = None
        if payload is not None:
            body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
            headers["content-type"] = "application/json"
        status, _, data = self._request(method, _API + path, params, headers, body, timeout)
        if not data.strip():
            return {}
        try:
            return json.loads(data)
        except ValueError:
            raise FerryError(status, "BadResponse", "the daemon answered with a body that is not JSON",
                             f"{method} {_API}{path}") from None

    def register_job(self, job, manifest=None, manifest_key=None, seed=0, world=None, node=None,
                     batch_size=1, ranks=None, partition=None, canonical_nodes=None, mix_fraction=None,
                     shuffle_block_shards=None, replace=False, resume=None):
        """Registers a job's plan (``POST /_ferry/v1/jobs``) and returns the daemon's answer
        (``job``, ``registration``, ``samples``, ``ranks``, ``steps_per_epoch``).

        Give exactly one of: ``manifest`` (a dict, or the path of the file ``ferry index`` wrote) or
        ``manifest_key`` (``"bucket/path/manifest.json"`` in the store), both with ``seed``, ``world``
        (``(nodes, ranks_per_node, workers_per_rank)``) and this ``node``; or ``ranks``, an explicit
        ordered list of ``"bucket/key"`` per rank. ``batch_size`` is the batch the loaders take, which the
        order endpoint deals to workers.

        Without ``world`` and ``node`` they come from the launcher's environment (torchrun's, a Kubeflow
        PyTorchJob's: :func:`ferry_client.placement.placement`), one loader worker per rank; with nothing
        there, one node of one rank. Every rank may call this with the same arguments: the daemon runs the job
        once (``registration`` is ``"new"`` for the first call, ``"existing"`` after). A different job under the
        same name raises FerryError 409 ``JobConflict`` naming what differs, unless ``replace=True`` (a job
        resumed on another world: every rank passes it, the first one replaces, ``"replaced"``).

        ``partition`` is ``"node"`` (each node reads its own shards every epoch: the corpus leaves the object
        store once), ``"global"`` (every node reads a share of every shard) or ``None``/``"auto"`` (node for a
        world of more than one node). ``canonical_nodes`` fixes the node plan's canonical node count (default:
        the world's nodes); a job resumed on another world passes the count it started with (the answer's
        ``canonical_nodes``). ``mix_fraction`` (0 to 1) moves that share of each node's shards to another
        node each epoch; ``shuffle_block_shards`` is how many shards' samples are shuffled together.

        ``resume`` is a checkpoint as :meth:`checkpoint` returned it (a dict with ``epoch``, ``position``,
        ``canonical_nodes``, ``homes`` and ``round_homes``), saved with the model and passed back as it is when the
        job resumes, on the same world or another (with ``replace=True`` there): the daemon then deals each
        canonical node to the node it lived on, and on a new node count moves only what must move (a departed
        node's canonical nodes, or a quarter of them to a fourth node), instead of ``c mod nodes`` again. The
        canonical node count comes with it. The answer's ``homes`` are where the canonical nodes live now, and
        ``moved_canonical_nodes`` how many changed node.
        """
        given = [n for n, v in (("manifest", manifest), ("manifest_key", manifest_key), ("ranks", ranks))
                 if v is not None]
        if len(given) != 1:
            raise ValueError(f"Give exactly one of manifest, manifest_key or ranks (given: {given or 'none'}).")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}.")
        if not isinstance(replace, bool):
            raise ValueError(f"replace must be True or False, not {replace!r}.")
        payload = {"job": job, "batch_size": batch_size}
        if replace:
            payload["replace"] = True
        if ranks is not None:
            if resume is not None:
                raise ValueError("resume applies to a job with a manifest, not to one given as ranks.")
            payload["ranks"] = [list(keys) for keys in ranks]
        else:
            if manifest is not None:
                payload["manifest"] = _load_manifest(manifest)
            else:
                payload["manifest_key"] = manifest_key
            if world is None or node is None:
                here = placement()
                if world is None:
                    world = (here.nodes, here.ranks_per_node, 1)
                if node is None:
                    node = here.node
            payload.update(seed=seed, world=_world(world), node=node)
            if partition is not None:
                if partition not in ("node", "global", "auto"):
                    raise ValueError(f"partition must be 'node', 'global' or 'auto', not {partition!r}.")
                payload["partition"] = partition
            if canonical_nodes is not None:
                if not isinstance(canonical_nodes, int) or canonical_nodes < 1:
                    raise ValueError(f"canonical_nodes must be a positive integer, not {canonical_nodes!r}.")
                payload["canonical_nodes"] = canonical_nodes
            if mix_fraction is not None:
                if not isinstance(mix_fraction, (int, float)) or not 0 <= mix_fraction <= 1:
                    raise ValueError(f"mix_fraction must be a number from 0 to 1, not {mix_fraction!r}.")
                payload["mix_fraction"] = mix_fraction
            if shuffle_block_shards is not None:
                if not isinstance(shuffle_block_shards, int) or shuffle_block_shards < 1:
                    raise ValueError(f"shuffle_block_shards must be a positive integer, not {shuffle_block_shards!r}.")
                payload["shuffle_block_shards"] = shuffle_block_shards
            if resume is not None:
                payload["resume"] = _resume(resume)
        return self._api("POST", "jobs", payload=payload)

    def checkpoint(self, job, epoch, position):
        """What to save to resume ``job`` after ``position`` samples consumed by the whole job in ``epoch`` (from 1):
        a dict with ``epoch``, ``position``, ``canonical_nodes`` and, for the node partition, ``homes`` and
        ``round_homes`` (where the canonical nodes live, and whose order the round in progress follows). Save it
        with the model; pass it to :meth:`register_job` as ``resume=`` and read on from ``start=position``."""
        params = [("epoch", epoch), ("position", position)]
        return self._api("GET", f"jobs/{uri_encode(job)}/checkpoint", params)

    def order_spans(self, job, epoch, rank, worker=0, workers=1, start=0):
        """The order of loader ``worker`` of ``workers`` of ``rank`` in ``epoch`` (from 1), resuming after ``start``
        samples consumed by the whole job, as spans: runs of consecutive samples of one object. Each span is a dict
        with ``bucket``, ``key``, ``etag``, ``offset`` and ``length`` (the bytes that cover its samples) and
        ``samples``, a list of ``[index, offset, length]`` (offsets in the object) in order. A span is read in one
        ranged GET and cut (what :class:`ferry_client.Samples` does). With ``workers=1`` it is the rank's order."""
        if not (0 <= worker < workers):
            raise ValueError(f"worker must be in [0, {workers}), not {worker}.")
        params = [("epoch", epoch), ("rank", rank), ("worker", worker), ("workers", workers), ("start", start)]
        answer = self._api("GET", f"jobs/{uri_encode(job)}/order", params)
        if isinstance(answer, dict) and isinstance(answer.get("spans"), list):
            return answer["spans"]
        if isinstance(answer, dict) and isinstance(answer.get("samples"), list):  # a daemon from before spans
            return spans_of(answer["samples"])
        raise FerryError(200, "BadResponse", 'the order answer has no "spans" list', f"GET {_API}jobs/{job}/order")

    def order(self, job, epoch, rank, worker=0, workers=1, start=0):
        """The samples loader ``worker`` of ``workers`` of ``rank`` reads in ``epoch`` (from 1), in order, resuming
        after ``start`` samples consumed by the whole job: a list of dicts with ``index``, ``bucket``, ``key``,
        ``offset``, ``length`` and ``etag`` (the spans of :meth:`order_spans`, one entry per sample). With
        ``workers=1`` it is the rank's whole order."""
        return samples_of(self.order_spans(job, epoch, rank, worker, workers, start))

    def report(self, job, rank, epoch, position, samples, waits_ms, elapsed_s=None):
        """Sends a consumer's progress: ``position`` (samples the whole job consumed this epoch),
        ``samples`` (consumed by this consumer since its last report), ``waits_ms`` (its wait per step) and
        ``elapsed_s``, the time by the consumer's own clock that the report covers (since its last report, or
        since its epoch began): the daemon's samples/s and wait share are then the consumer's own."""
        payload = {"rank": rank, "epoch": epoch, "position": position, "samples": samples,
                   "waits_ms": [round(float(w), 3) for w in waits_ms]}
        if elapsed_s is not None:
            payload["elapsed_s"] = round(float(elapsed_s), 6)
        return self._api("POST", f"jobs/{uri_encode(job)}/progress", payload=payload)

    def status(self):
        """The four numbers per job and per tier, with their history (``GET /_ferry/v1/status``)."""
        return self._api("GET", "status")

    def flush(self, timeout_s=None):
        """The write-back fence: waits until every write acknowledged before the call is in the object store.

        Returns the daemon's answer when they all are: ``{"complete": true, "write_back": ..., "first_error":
        null, "writes": [{"bucket", "key", "size", "durability", "error"}, ...]}``. Raises FerryError when
        not: ``FlushTimedOut`` (504) when ``timeout_s`` passed with writes still ``local``, ``FlushFailed``
        (502) when the store refused a write for good; the same answer is in the error's ``answer``.
        Without ``timeout_s`` the daemon's own limit applies (10 minutes).
        """
        params = []
        socket_timeout = None  # the fence may take long: wait for the daemon's answer
        if timeout_s is not None:
            params.append(("timeout_ms", int(timeout_s * 1000)))
            socket_timeout = timeout_s + (self.timeout or 0)
        try:
            return self._api("POST", "flush", params, timeout=socket_timeout)
        except FerryError as e:
            answer = e.answer
            if not (isinstance(answer, dict) and "complete" in answer):
                raise
            if answer.get("first_error"):
                raise FerryError(e.status, "FlushFailed", "the object store refused a write: "
                                 f"{answer['first_error']}", e.request, answer) from None
            local = sum(1 for w in answer.get("writes") or () if w.get("durability") == "local")
            raise FerryError(e.status, "FlushTimedOut", f"{local} writes were still local when the fence "
                             "timed out", e.request, answer) from None
