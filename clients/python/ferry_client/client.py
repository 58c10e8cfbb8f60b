"""FerryClient: ferry's own JSON API (``/_ferry/v1``: jobs, order, progress, status, flush) over the S3 transport
(:class:`ferry_client.s3.S3Client`), which reads and writes objects through the daemon.

With no URL a client finds the node's daemon (``FERRY_ENDPOINT``, else ``http://127.0.0.1:9099``), and with no keys
takes ``FERRY_ACCESS_KEY`` and ``FERRY_SECRET_KEY``. Answers are typed dicts (:mod:`ferry_client.answers`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union, cast

from .answers import Checkpoint, FlushResult, Job, Progress, Sample, Span, Status
from .errors import FerryError
from .placement import placement
from .s3 import _USE_DEFAULT, Params, S3Client, Timeout, base_url
from .settings import JobSettings
from .sigv4 import uri_encode

__all__ = ["DEFAULT_URL", "ENDPOINT_VARIABLE", "FerryClient", "default_url", "samples_of", "spans_of"]

DEFAULT_URL = "http://127.0.0.1:9099"
ENDPOINT_VARIABLE = "FERRY_ENDPOINT"
_API = "/_ferry/v1/"

# A manifest: the dict ``ferry index`` wrote, or the path of its file.
Manifest = Union[Mapping[str, Any], str, "os.PathLike[str]"]
# A world: (nodes, ranks_per_node, workers_per_rank), or a dict with those keys.
World = Union[Sequence[int], Mapping[str, int]]


def default_url() -> str:
    """The daemon a client talks to when given no URL: ``FERRY_ENDPOINT`` when set (on Kubernetes, the node-local
    Service), else the node's own daemon on ``http://127.0.0.1:9099``."""
    value = os.environ.get(ENDPOINT_VARIABLE, "").strip()
    return value or DEFAULT_URL


def _world(world: World) -> dict[str, int]:
    """``(nodes, ranks_per_node, workers_per_rank)`` or a dict with those keys, as the daemon's JSON."""
    names = ("nodes", "ranks_per_node", "workers_per_rank")
    values: list[Any] = [world.get(n) for n in names] if isinstance(world, Mapping) else list(world)
    if len(values) != 3 or not all(isinstance(v, int) and v > 0 for v in values):
        raise ValueError("world must be three positive integers (nodes, ranks_per_node, workers_per_rank), "
                         f"not {world!r}.")
    return dict(zip(names, values))


def _resume(resume: object) -> dict[str, Any]:
    """A checkpoint from :meth:`FerryClient.checkpoint` (or the ``homes`` of a registration's answer, as
    ``{"homes": ...}``), checked for its shape; the daemon checks that it fits the job."""
    if not isinstance(resume, Mapping):
        raise ValueError(f"resume must be the dict FerryClient.checkpoint returned, not {type(resume).__name__}.")
    if not isinstance(resume.get("homes"), Mapping):
        raise ValueError("resume has no homes: pass the dict FerryClient.checkpoint returned for a node-partition job.")
    fields = ("epoch", "position", "canonical_nodes", "homes", "round_homes")
    return {k: resume[k] for k in fields if resume.get(k) is not None}


def _load_manifest(manifest: object) -> Any:
    """An inline manifest: a dict as it is, or a path to the JSON file ``ferry index`` wrote."""
    if isinstance(manifest, Mapping):
        return dict(manifest)
    if isinstance(manifest, (str, os.PathLike)):
        with open(manifest, "rb") as f:
            return json.load(f)
    raise TypeError(f"manifest must be a dict or the path of a manifest file, not {type(manifest).__name__}.")


def samples_of(spans: Iterable[Mapping[str, Any]]) -> list[Sample]:
    """The samples of an order's spans (:meth:`FerryClient.order_spans`), one dict per sample, in order."""
    out: list[Sample] = []
    for span in spans:
        for index, offset, length in span["samples"]:
            out.append({"index": index, "bucket": span["bucket"], "key": span["key"], "offset": offset,
                        "length": length, "etag": span.get("etag")})
    return out


def spans_of(samples: Iterable[Mapping[str, Any]]) -> list[Span]:
    """Sample dicts in order, cut into spans as the daemon does: runs of consecutive samples of one object (the
    same bucket, key and ETag), each with the range that covers its samples. A sample without ``offset`` or
    ``length`` (a whole object) keeps None there, and so does its span."""
    spans: list[Span] = []
    last: Span | None = None
    for sample in samples:
        entry = [sample.get("index"), sample.get("offset"), sample.get("length")]
        if last is not None and (last["bucket"], last["key"], last["etag"]) == (
                sample["bucket"], sample["key"], sample.get("etag")):
            last["samples"].append(entry)
        else:
            last = {"bucket": sample["bucket"], "key": sample["key"], "etag": sample.get("etag"), "samples": [entry]}
            spans.append(last)
    for span in spans:
        ranges = [(o, n) for _, o, n in span["samples"]]
        if all(o is not None and n is not None for o, n in ranges):
            span["offset"] = min(o for o, _ in ranges)
            span["length"] = max(o + n for o, n in ranges) - span["offset"]
        else:
            span["offset"] = span["length"] = None
    return spans


class FerryClient(S3Client):
    """A client of the ferry daemon: S3 object reads and writes (:class:`ferry_client.s3.S3Client`'s ``get``,
    ``head``, ``put``), and the ``/_ferry/v1`` API.

    ``url`` is the daemon's base URL (path-style S3); without one, ``FERRY_ENDPOINT``, else the node's daemon on
    ``http://127.0.0.1:9099`` (see :func:`default_url`). Give ``access_key`` and ``secret_key`` (or set
    ``FERRY_ACCESS_KEY`` and ``FERRY_SECRET_KEY``) when the daemon checks signatures; every request is
    then signed with AWS Signature V4 for ``region``. ``timeout`` is the socket timeout in seconds.
    A client may be shared by threads: each thread keeps its own connection.
    """

    def __init__(self, url: str | None = None, access_key: str | None = None, secret_key: str | None = None,
                 region: str = "us-east-1", timeout: float | None = 60) -> None:
        if url is None:
            url = default_url()
            url = base_url(url, "" if url == DEFAULT_URL else f" (from {ENDPOINT_VARIABLE})")
        access_key = access_key if access_key is not None else os.environ.get("FERRY_ACCESS_KEY")
        secret_key = secret_key if secret_key is not None else os.environ.get("FERRY_SECRET_KEY")
        if bool(access_key) != bool(secret_key):
            raise ValueError("Give both an access key and a secret key (or set both FERRY_ACCESS_KEY and "
                             "FERRY_SECRET_KEY), or neither.")
        super().__init__(url, access_key, secret_key, region, timeout)

    # -- ferry's API ---------------------------------------------------------------------------

    def _api(self, method: str, path: str, params: Params = (), payload: object = None,
             timeout: Timeout = _USE_DEFAULT) -> dict[str, Any]:
        """One request to ferry's JSON API; the answer's JSON object ({} for an empty body)."""
        headers = {"accept": "application/json"}
        body = None
        if payload is not None:
            body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
            headers["content-type"] = "application/json"
        status, _, data = self._request(method, _API + path, params, headers, body, timeout)
        if not data.strip():
            return {}
        try:
            answer = json.loads(data)
        except ValueError:
            raise FerryError(status, "BadResponse", "the daemon answered with a body that is not JSON",
                             f"{method} {_API}{path}") from None
        if not isinstance(answer, dict):
            raise FerryError(status, "BadResponse", "the daemon answered with JSON that is not an object",
                             f"{method} {_API}{path}")
        return answer

    def register_job(self, job: str, manifest: Manifest | None = None, manifest_key: str | None = None,
                     seed: int | None = None, world: World | None = None, node: int | None = None,
                     batch_size: int | None = None, ranks: Sequence[Sequence[str]] | None = None,
                     partition: str | None = None, canonical_nodes: int | None = None,
                     mix_fraction: float | None = None, shuffle_block_shards: int | None = None,
                     replace: bool = False, resume: Mapping[str, Any] | None = None, *,
                     settings: JobSettings | None = None) -> Job:
        """Registers a job's plan (``POST /_ferry/v1/jobs``) and returns the daemon's answer, a :class:`Job`
        (``job``, ``registration``, ``samples``, ``ranks``, ``steps_per_epoch``; ``job["ranks"]`` reads it too).

        Give exactly one of: ``manifest`` (a dict, or the path of the file ``ferry index`` wrote) or
        ``manifest_key`` (``"bucket/path/manifest.json"`` in the store), both with the plan's settings, ``world``
        (``(nodes, ranks_per_node, workers_per_rank)``) and this ``node``; or ``ranks``, an explicit ordered list of
        ``"bucket/key"`` per rank (of the settings only ``batch_size`` applies).

        The plan's settings are a :class:`ferry_client.JobSettings` (``seed``, ``batch_size``, ``partition``,
        ``canonical_nodes``, ``mix_fraction``, ``shuffle_block_shards``: its comment says what each means), given as
        ``settings=`` or one keyword at a time; a keyword given replaces that field of ``settings``.
        ``batch_size`` is the batch the loaders take, which the order endpoint deals to workers.

        Without ``world`` and ``node`` they come from the launcher's environment (torchrun's, a Kubeflow
        PyTorchJob's: :func:`ferry_client.placement.placement`), one loader worker per rank; with nothing
        there, one node of one rank. Every rank may call this with the same arguments: the daemon runs the job
        once (``registration`` is ``"new"`` for the first call, ``"existing"`` after). A different job under the
        same name raises FerryError 409 ``JobConflict`` naming what differs, unless ``replace=True`` (a job
        resumed on another world: every rank passes it, the first one replaces, ``"replaced"``).

        ``resume`` is a checkpoint as :meth:`checkpoint` returned it (a dict with ``epoch``, ``position``,
        ``canonical_nodes``, ``homes`` and ``round_homes``), saved with the model and passed back as it is when the
        job resumes, on the same world or another (with ``replace=True`` there): the daemon then deals each
        canonical node to the node it lived on, and on a new node count moves only what must move (a departed
        node's canonical nodes, or a quarter of them to a fourth node), instead of ``c mod nodes`` again. The
        canonical node count comes with it. The answer's ``homes`` are where the canonical nodes live now, and
        ``moved_canonical_nodes`` how many changed node.
        """
        plan = (settings or JobSettings()).with_changes(
            seed=seed, batch_size=batch_size, partition=partition, canonical_nodes=canonical_nodes,
            mix_fraction=mix_fraction, shuffle_block_shards=shuffle_block_shards)
        given = [n for n, v in (("manifest", manifest), ("manifest_key", manifest_key), ("ranks", ranks))
                 if v is not None]
        if len(given) != 1:
            raise ValueError(f"Give exactly one of manifest, manifest_key or ranks (given: {given or 'none'}).")
        if not isinstance(replace, bool):
            raise ValueError(f"replace must be True or False, not {replace!r}.")
        payload: dict[str, Any] = {"job": job, "batch_size": plan.batch_size}
        if replace:
            payload["replace"] = True
        if ranks is not None:
            if resume is not None:
                raise ValueError("resume applies to a job with a manifest, not to one given as ranks.")
            payload["ranks"] = [list(keys) for keys in ranks]
            return Job(self._api("POST", "jobs", payload=payload))
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
        payload.update(seed=plan.seed, world=_world(world), node=node)
        for name in ("partition", "canonical_nodes", "mix_fraction", "shuffle_block_shards"):
            value = getattr(plan, name)
            if value is not None:
                payload[name] = value
        if resume is not None:
            payload["resume"] = _resume(resume)
        return Job(self._api("POST", "jobs", payload=payload))

    def checkpoint(self, job: str, epoch: int, position: int) -> Checkpoint:
        """What to save to resume ``job`` after ``position`` samples consumed by the whole job in ``epoch`` (from 1):
        a dict with ``epoch``, ``position``, ``canonical_nodes`` and, for the node partition, ``homes`` and
        ``round_homes`` (where the canonical nodes live, and whose order the round in progress follows). Save it
        with the model; pass it to :meth:`register_job` as ``resume=`` and read on from ``start=position``."""
        params = [("epoch", epoch), ("position", position)]
        return Checkpoint(self._api("GET", f"jobs/{uri_encode(job)}/checkpoint", params))

    def order_spans(self, job: str, epoch: int, rank: int, worker: int = 0, workers: int = 1,
                    start: int = 0) -> list[Span]:
        """The order of loader ``worker`` of ``workers`` of ``rank`` in ``epoch`` (from 1), resuming after ``start``
        samples consumed by the whole job, as spans: runs of consecutive samples of one object. Each span is a dict
        with ``bucket``, ``key``, ``etag``, ``offset`` and ``length`` (the bytes that cover its samples) and
        ``samples``, a list of ``[index, offset, length]`` (offsets in the object) in order. A span is read in one
        ranged GET and cut (what :class:`ferry_client.Samples` does). With ``workers=1`` it is the rank's order."""
        if not (0 <= worker < workers):
            raise ValueError(f"worker must be in [0, {workers}), not {worker}.")
        params = [("epoch", epoch), ("rank", rank), ("worker", worker), ("workers", workers), ("start", start)]
        answer = self._api("GET", f"jobs/{uri_encode(job)}/order", params)
        spans = answer.get("spans")
        if isinstance(spans, list):
            return cast("list[Span]", spans)
        samples = answer.get("samples")
        if isinstance(samples, list):  # a daemon from before spans
            return spans_of(samples)
        raise FerryError(200, "BadResponse", 'the order answer has no "spans" list', f"GET {_API}jobs/{job}/order")

    def order(self, job: str, epoch: int, rank: int, worker: int = 0, workers: int = 1,
              start: int = 0) -> list[Sample]:
        """The samples loader ``worker`` of ``workers`` of ``rank`` reads in ``epoch`` (from 1), in order, resuming
        after ``start`` samples consumed by the whole job: a list of dicts with ``index``, ``bucket``, ``key``,
        ``offset``, ``length`` and ``etag`` (the spans of :meth:`order_spans`, one entry per sample). With
        ``workers=1`` it is the rank's whole order."""
        return samples_of(self.order_spans(job, epoch, rank, worker, workers, start))

    def report(self, job: str, rank: int, epoch: int, position: int, samples: int, waits_ms: Iterable[float],
               elapsed_s: float | None = None) -> Progress:
        """Sends a consumer's progress: ``position`` (samples the whole job consumed this epoch),
        ``samples`` (consumed by this consumer since its last report), ``waits_ms`` (its wait per step) and
        ``elapsed_s``, the time by the consumer's own clock that the report covers (since its last report, or
        since its epoch began): the daemon's samples/s and wait share are then the consumer's own. The answer's
        ``advice`` holds the daemon's findings for the job."""
        payload: dict[str, Any] = {"rank": rank, "epoch": epoch, "position": position, "samples": samples,
                                   "waits_ms": [round(float(w), 3) for w in waits_ms]}
        if elapsed_s is not None:
            payload["elapsed_s"] = round(float(elapsed_s), 6)
        return Progress(self._api("POST", f"jobs/{uri_encode(job)}/progress", payload=payload))

    def status(self) -> Status:
        """The four numbers per job and per tier, with their history (``GET /_ferry/v1/status``)."""
        return Status(self._api("GET", "status"))

    def flush(self, timeout_s: float | None = None, bucket: str | None = None, prefix: str | None = None) -> FlushResult:
        """The write-back fence: waits until every write acknowledged before the call is in the object store (with
        ``bucket``, every write in it; with ``prefix`` too, those whose key starts with it: a checkpoint's files).

        Returns the daemon's answer when they all are: ``{"complete": true, "write_back": ..., "first_error":
        null, "writes": [{"bucket", "key", "size", "durability", "error"}, ...]}``. Raises FerryError when
        not: ``FlushTimedOut`` (504) when ``timeout_s`` passed with writes still ``local``, ``FlushFailed``
        (502) when the store refused a write for good; the same answer is in the error's ``answer``.
        Without ``timeout_s`` the daemon's own limit applies (10 minutes).
        """
        params: list[tuple[str, object]] = []
        if prefix is not None and bucket is None:
            raise ValueError("A flush of a prefix names its bucket too: flush(bucket=..., prefix=...).")
        if bucket is not None:
            params.append(("bucket", bucket))
        if prefix is not None:
            params.append(("prefix", prefix))
        socket_timeout = None  # the fence may take long: wait for the daemon's answer
        if timeout_s is not None:
            params.append(("timeout_ms", int(timeout_s * 1000)))
            socket_timeout = timeout_s + (self.timeout or 0)
        try:
            return FlushResult(self._api("POST", "flush", params, timeout=socket_timeout))
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
