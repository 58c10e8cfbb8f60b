"""Decoded samples kept on the node's tier, so that epochs after the first skip the decode (docs/decoded-cache.md).

:func:`pack` and :func:`unpack` turn what a decode returns into bytes and back: tensors, NumPy arrays, PIL images,
bytes, text, numbers and the lists, tuples and dicts that hold them. Reading back builds only those types: nothing
is unpickled and no code named by the bytes runs. :class:`DecodedCache` is one loader worker's door to the daemon's
decoded samples: which of its samples are held, reading one, offering one (in the background), and what it measured,
which the daemon splits its tier by.
"""

from __future__ import annotations

import logging
import queue
import struct
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Callable

from .errors import FerryError

__all__ = ["Decoded", "DecodedCache", "decode_name", "pack", "unpack"]

log = logging.getLogger("ferry_client")

_MAGIC = b"FRYS1"
_PATH = "/_ferry/v1/decoded"
# the element types a tensor or array may have: names, never code
_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "uint8", "int8", "int16", "int32",
           "int64", "bool")
_U32 = struct.Struct("<I")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")


def decode_name(decode: Callable[..., Any], version: str) -> str:
    """The name a decode's output is kept under: the function's qualified name and the ``version`` its user gives
    (and changes when the function changes)."""
    if not isinstance(version, str) or not version or "\n" in version:
        raise ValueError(f"decode_version must be a non-empty string on one line, not {version!r}.")
    module = getattr(decode, "__module__", None) or type(decode).__module__
    name = getattr(decode, "__qualname__", None) or type(decode).__qualname__
    return f"{module}.{name}:{version}"


def pack(value: Any) -> bytes:
    """``value`` as bytes :func:`unpack` reads back; TypeError naming the first part of it that cannot be kept."""
    out = bytearray(_MAGIC)
    _pack(value, out)
    return bytes(out)


def _text(s: str, out: bytearray) -> None:
    raw = s.encode("utf-8")
    out += _U32.pack(len(raw))
    out += raw


def _shape(shape: Sequence[int], out: bytearray) -> None:
    out.append(len(shape))
    for n in shape:
        out += _I64.pack(int(n))


def _pack(value: Any, out: bytearray) -> None:
    if value is None:
        out += b"N"
    elif value is True or value is False:
        out += b"T" if value else b"F"
    elif isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            out += b"i" + _I64.pack(value)
        else:
            out += b"I"
            _text(str(value), out)
    elif isinstance(value, float):
        out += b"f" + _F64.pack(value)
    elif isinstance(value, str):
        out += b"s"
        _text(value, out)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        out += b"b" + _U32.pack(len(raw))
        out += raw
    elif isinstance(value, (list, tuple)):
        out += (b"l" if isinstance(value, list) else b"t") + _U32.pack(len(value))
        for item in value:
            _pack(item, out)
    elif isinstance(value, dict):
        out += b"d" + _U32.pack(len(value))
        for k, v in value.items():
            _pack(k, out)
            _pack(v, out)
    else:
        _pack_array(value, out)


def _pack_array(value: Any, out: bytearray) -> None:
    kind = type(value).__module__.split(".")[0]
    if kind == "torch" and type(value).__name__ in ("Tensor", "Parameter"):
        tensor = value.detach().cpu().contiguous()
        dtype = str(tensor.dtype).removeprefix("torch.")
        if dtype not in _DTYPES:
            raise TypeError(f"a tensor of {tensor.dtype} cannot be kept decoded (kept: {', '.join(_DTYPES)}).")
        raw = tensor.view(-1).view(__import__("torch").uint8).numpy().tobytes() if tensor.numel() else b""
        out += b"A"
        _text(dtype, out)
        _shape(tensor.shape, out)
    elif kind == "numpy" and type(value).__name__ == "ndarray":
        dtype = value.dtype.name
        if dtype not in _DTYPES or value.dtype.byteorder == ">":
            raise TypeError(f"an array of {value.dtype} cannot be kept decoded (kept: {', '.join(_DTYPES)}).")
        raw = value.tobytes(order="C")
        out += b"n"
        _text(dtype, out)
        _shape(value.shape, out)
    elif kind == "PIL" and hasattr(value, "tobytes") and hasattr(value, "mode"):
        raw = value.tobytes()
        out += b"P"
        _text(value.mode, out)
        _shape(value.size, out)
    else:
        raise TypeError(f"a {type(value).__module__}.{type(value).__qualname__} cannot be kept decoded: a decode "
                        "that ferry keeps returns tensors, NumPy arrays, PIL images, bytes, text, numbers, or lists, "
                        "tuples and dicts of them.")
    out += _I64.pack(len(raw))
    out += raw


def unpack(data: bytes | bytearray | memoryview) -> Any:
    """What :func:`pack` packed; ValueError when ``data`` is not such bytes."""
    view = memoryview(data)
    if bytes(view[:len(_MAGIC)]) != _MAGIC:
        raise ValueError("these bytes are not a decoded sample ferry packed.")
    try:
        value, end = _unpack(view, len(_MAGIC))
    except (struct.error, IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"a decoded sample is cut short or damaged ({e}).") from None
    if end != len(view):
        raise ValueError(f"a decoded sample has {len(view) - end} bytes after its end.")
    return value


def _read_text(view: memoryview, at: int) -> tuple[str, int]:
    (n,) = _U32.unpack_from(view, at)
    at += 4
    if at + n > len(view):
        raise IndexError("text past the end")
    return bytes(view[at:at + n]).decode("utf-8"), at + n


def _read_shape(view: memoryview, at: int) -> tuple[list[int], int]:
    ndim = view[at]
    at += 1
    shape = [_I64.unpack_from(view, at + 8 * i)[0] for i in range(ndim)]
    return shape, at + 8 * ndim


def _unpack(view: memoryview, at: int) -> tuple[Any, int]:
    tag = view[at:at + 1].tobytes()
    at += 1
    if tag == b"N":
        return None, at
    if tag in (b"T", b"F"):
        return tag == b"T", at
    if tag == b"i":
        return _I64.unpack_from(view, at)[0], at + 8
    if tag == b"I":
        text, at = _read_text(view, at)
        return int(text), at
    if tag == b"f":
        return _F64.unpack_from(view, at)[0], at + 8
    if tag == b"s":
        return _read_text(view, at)
    if tag == b"b":
        (n,) = _U32.unpack_from(view, at)
        at += 4
        if at + n > len(view):
            raise IndexError("bytes past the end")
        return bytes(view[at:at + n]), at + n
    if tag in (b"l", b"t"):
        (n,) = _U32.unpack_from(view, at)
        at += 4
        items = []
        for _ in range(n):
            item, at = _unpack(view, at)
            items.append(item)
        return (items if tag == b"l" else tuple(items)), at
    if tag == b"d":
        (n,) = _U32.unpack_from(view, at)
        at += 4
        d = {}
        for _ in range(n):
            k, at = _unpack(view, at)
            v, at = _unpack(view, at)
            d[k] = v
        return d, at
    if tag in (b"A", b"n", b"P"):
        kind, at = _read_text(view, at)
        shape, at = _read_shape(view, at)
        (n,) = _I64.unpack_from(view, at)
        at += 8
        if n < 0 or at + n > len(view):
            raise IndexError("array bytes past the end")
        raw = view[at:at + n]
        return _array(tag, kind, shape, raw), at + n
    raise ValueError(f"a decoded sample holds an unknown tag {tag!r}")


def _array(tag: bytes, kind: str, shape: list[int], raw: memoryview) -> Any:
    if tag == b"P":
        from PIL import Image
        return Image.frombytes(kind, (shape[0], shape[1]), bytes(raw))
    if kind not in _DTYPES:
        raise ValueError(f"a decoded sample holds an unknown element type {kind!r}")
    if tag == b"A":
        import torch
        dtype = getattr(torch, kind)
        flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8) if len(raw) else torch.empty(0, dtype=torch.uint8)
        return flat.view(dtype).reshape(shape)
    import numpy
    return numpy.frombuffer(bytearray(raw), dtype=kind).reshape(shape)


class Decoded:
    """A sample read back decoded: its packed bytes, and the CPU seconds the read took on the reading thread."""

    __slots__ = ("cpu_s", "data")

    def __init__(self, data: bytes, cpu_s: float) -> None:
        self.data, self.cpu_s = data, cpu_s


def _keyed(sample: Mapping[str, Any]) -> bool:
    """A sample that can be kept: its ETag and its range are known (a whole object's, read by no range, is not)."""
    return bool(sample.get("etag")) and sample.get("length") is not None


def _key(sample: Mapping[str, Any]) -> list[Any]:
    return [sample["bucket"], sample["key"], sample.get("etag") or "", sample.get("offset") or 0,
            sample.get("length") if sample.get("length") is not None else -1]


class DecodedCache:
    """One loader worker's door to the daemon's decoded samples (``/_ferry/v1/decoded``), for ``job``'s ``epoch``
    and the decode named ``version`` (:func:`decode_name`).

    :meth:`held` asks which samples of the worker's order are held (once per iteration); :meth:`read` reads one
    back (None when it is no longer held, or failed the daemon's check: read the encoded bytes then);
    :meth:`decoded` says a sample was decoded, measures it and, when the daemon keeps decoded samples, offers it on a
    background thread (past 64 MiB of offers waiting, one is dropped: the loader never waits for them). What was
    measured goes to the daemon every few hundred samples and at :meth:`close`; its answer says whether to keep
    offering. Samples without an ETag (nothing would tell a changed object) or a range are never kept. With
    ``version`` None it only measures: the daemon's advisor then says what keeping them would give.
    """

    _LOOKUP_BATCH = 4096
    _REPORT_EVERY = 256
    _SIZED = 16
    _QUEUED_BYTES = 64 << 20  # offers waiting for their PUT, at most: past it an offer is dropped

    def __init__(self, client: Any, job: str, epoch: int, version: str | None, workers: int = 1) -> None:
        self.client, self.job, self.epoch, self.version, self.workers = client, job, epoch, version, workers
        self.keep = False  # offer decoded samples: what the daemon's last answer said
        self.kept_here = True  # False once the daemon says it keeps none (--decoded off): it still takes measures
        self.packable = True  # False once a decode returned what pack cannot keep
        self._sizing = self._SIZED  # samples still to pack only to tell the daemon their size
        self._sized_told = False
        self._lock = threading.Lock()
        self._counts: dict[str, float] = {}
        self._since_report = 0
        self._offers: queue.Queue[tuple[Mapping[str, Any], bytes, float] | None] = queue.Queue()
        self._queued_bytes = 0
        self._offerer: threading.Thread | None = None
        self.offered = self.stored = self.dropped = 0

    def _add(self, **counts: float) -> None:
        with self._lock:
            for k, v in counts.items():
                self._counts[k] = self._counts.get(k, 0) + v

    def held(self, samples: Sequence[Mapping[str, Any]]) -> list[bool]:
        """For each sample in order, whether the daemon holds it decoded."""
        out: list[bool] = []
        for begin in range(0, len(samples), self._LOOKUP_BATCH):
            batch = samples[begin:begin + self._LOOKUP_BATCH]
            keyed = [s for s in batch if _keyed(s)]
            if not keyed or not self.kept_here:
                out.extend(False for _ in batch)
                continue
            try:
                answer = self.client._api("POST", "decoded/lookup", payload={
                    "version": self.version, "samples": [_key(s) for s in keyed]})
            except FerryError as e:
                if e.status == 409:  # this daemon keeps none (--decoded off, or no tier)
                    self.kept_here = self.keep = False
                    out.extend(False for _ in batch)
                    continue
                raise
            self.keep = bool(answer.get("keep"))
            flags = iter(str(answer.get("held", "")))
            out.extend(_keyed(s) and next(flags, "0") == "1" for s in batch)
        return out

    def _params(self, sample: Mapping[str, Any]) -> list[tuple[str, object]]:
        bucket, key, etag, offset, length = _key(sample)
        params: list[tuple[str, object]] = [("bucket", bucket), ("key", key), ("etag", etag), ("offset", offset),
                                            ("length", length), ("version", self.version), ("job", self.job),
                                            ("epoch", self.epoch)]
        if sample.get("index") is not None:
            params.append(("index", sample["index"]))
        return params

    def read(self, sample: Mapping[str, Any]) -> Decoded | None:
        """The sample's decoded bytes, or None when the daemon no longer holds it (evicted, failed its check, or
        its object changed)."""
        cpu = time.thread_time()
        try:
            _, _, data = self.client._request("GET", _PATH, self._params(sample))
        except FerryError as e:
            if e.status == 404:
                return None
            raise
        return Decoded(data, time.thread_time() - cpu)

    def unpacked(self, item: Decoded) -> Any:
        """A read's value, timed: what the split weighs a decoded read by."""
        start = time.thread_time()
        value = unpack(item.data)
        self._add(decoded_reads=1, decoded_read_s=item.cpu_s + time.thread_time() - start)
        self._tick()
        return value

    def decoded(self, sample: Mapping[str, Any], value: Any, decode_s: float) -> None:
        """``value`` is the decode of ``sample``, which took ``decode_s``; offered to the daemon when it keeps them."""
        counts: dict[str, float] = {"decodes": 1, "decode_s": decode_s}
        if self.packable and _keyed(sample) and ((self.keep and self.version) or self._sizing > 0):
            self._sizing -= 1
            try:
                packed = pack(value)
            except TypeError as e:
                log.warning("ferry keeps no decoded samples of this loader: %s", e)
                self.packable = self.keep = False
            else:
                counts.update(decoded_bytes=len(packed), decoded_sized=1)
                if self.keep and self.version:
                    self._offer(sample, packed, decode_s)
        self._add(**counts)
        self._tick()

    def encoded(self, samples: int, cpu_s: float, nbytes: int, wall_s: float, threads: int) -> None:
        """Encoded reads made: ``samples`` in them, their CPU seconds and bytes, and their wall time over the
        ``threads`` they were read on (the rate encoded bytes came at, in every epoch). Their CPU is not counted in a
        job's first epoch: its reads fetch from the store (a capped stream costs more CPU per byte than a read from
        the tier), and what the split weighs is what later epochs' reads cost."""
        self._add(fetch_bytes=nbytes, fetch_s=wall_s / max(1, threads))
        if self.epoch > 1:
            self._add(encoded_reads=samples, encoded_read_s=cpu_s, encoded_bytes=nbytes)

    def _offer(self, sample: Mapping[str, Any], packed: bytes, decode_s: float) -> None:
        if self._offerer is None:
            self._offerer = threading.Thread(target=self._offering, name="ferry-decoded-offers", daemon=True)
            self._offerer.start()
        with self._lock:
            if self._queued_bytes + len(packed) > self._QUEUED_BYTES:
                self.dropped += 1
                return
            self._queued_bytes += len(packed)
        self._offers.put((sample, packed, decode_s))
        self.offered += 1

    def _offering(self) -> None:
        while True:
            offer = self._offers.get()
            if offer is None:
                return
            sample, packed, decode_s = offer
            with self._lock:
                self._queued_bytes -= len(packed)
            params = [*self._params(sample), ("decode_s", f"{decode_s:.6f}")]
            try:
                status, _, _ = self.client._request("PUT", _PATH, params, {"content-type": "application/octet-stream"},
                                                    packed)
                if status == 201:
                    self.stored += 1
            except FerryError as e:
                log.debug("a decoded sample was not kept: %s", e)

    def _tick(self) -> None:
        self._since_report += 1
        if self._since_report >= self._REPORT_EVERY or (self._sizing == 0 and not self._sized_told):
            self._sized_told = True  # the sizes measured go at once: the daemon can choose after them
            self.report()

    def report(self) -> None:
        """Sends what was measured since the last report; the answer says whether to keep offering."""
        with self._lock:
            counts, self._counts = self._counts, {}
            self._since_report = 0
        if not counts:
            return
        payload: dict[str, Any] = {"job": self.job, "epoch": self.epoch, "workers": self.workers}
        payload.update({k: round(v, 9) if isinstance(v, float) else v for k, v in counts.items()})
        # taken by a daemon that keeps none too: its advisor says what keeping them would give
        answer = self.client._api("POST", "decoded/report", payload=payload)
        self.keep = self.kept_here and bool(answer.get("keep"))

    def close(self) -> None:
        """Waits for the offers queued (a few seconds at most) and sends the last measures."""
        if self._offerer is not None:
            self._offers.put(None)
            self._offerer.join(timeout=30)
            self._offerer = None
        self.report()
