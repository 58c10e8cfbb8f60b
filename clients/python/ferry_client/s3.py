"""S3Client: the S3 transport under :class:`ferry_client.FerryClient`: signed requests on kept-alive connections, and
object reads and writes.

One keep-alive connection per thread (and per process: a forked child opens its own), reconnected once when the
server dropped it. Every request is signed with AWS Signature V4 when keys are given. Any status outside 2xx raises
:class:`FerryError`; no answer at all raises :class:`FerryConnectionError`.
"""

from __future__ import annotations

import enum
import hashlib
import http.client
import io
import os
import socket
import threading
import weakref
from collections.abc import Iterable
from typing import Protocol, TypeVar, Union
from urllib.parse import urlsplit

from .answers import ObjectInfo, PutResult
from .errors import FerryConnectionError, error_from_response
from .sigv4 import EMPTY_SHA256, Signer, canonical_query, uri_encode

__all__ = ["Body", "PutStream", "Readable", "S3Client", "base_url", "durability_level"]

_HASH_CHUNK = 1 << 20
# The server closed a kept-alive connection: safe to send again on a new one.
# (http.client.RemoteDisconnected is both a ConnectionResetError and a BadStatusLine.)
_DROPPED = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, http.client.BadStatusLine)


class _Default(enum.Enum):
    """The client's own socket timeout, where a request may name another (None included: no limit)."""

    TIMEOUT = 0


_USE_DEFAULT = _Default.TIMEOUT


class Readable(Protocol):
    """A seekable binary file, as a request body: read from where it stands, and sent again from there on a retry."""

    def read(self, size: int = -1, /) -> bytes: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...

    def tell(self) -> int: ...


Body = Union[bytes, bytearray, memoryview, Readable, None]
Params = Iterable["tuple[str, object]"]
Timeout = Union[float, None, _Default]
_Client = TypeVar("_Client", bound="S3Client")


_SEND_BLOCK = 1 << 20  # bytes of a file body written to the socket at a time


def base_url(url: str, source: str = "") -> str:
    """``scheme://host:port`` of a server's URL, checked: http or https, a host, no path or query (buckets are
    path-style). ``source`` says where the URL came from, in the error's sentence."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"The daemon URL must look like http://host:port, not {url!r}{source}.")
    if parts.path not in ("", "/") or parts.query:
        raise ValueError(f"The daemon URL must have no path or query (buckets are path-style): {url!r}{source}.")
    return f"{parts.scheme}://{parts.netloc}"


def _quote_etag(etag: str) -> str:
    """``If-Match`` wants the ETag in double quotes, as S3 sends it; add them when missing."""
    etag = str(etag)
    if etag == "*" or etag.startswith(('"', "W/")):
        return etag
    return f'"{etag}"'


def _range_header(offset: int | None, length: int | None) -> str | None:
    """The ``Range`` header for ``length`` bytes from ``offset`` (either may be None), or None for all."""
    for name, value in (("offset", offset), ("length", length)):
        if value is not None and (not isinstance(value, int) or value < 0):
            raise ValueError(f"{name} must be a non-negative integer, not {value!r}.")
    if length is None:
        return f"bytes={offset}-" if offset else None
    start = offset or 0
    return f"bytes={start}-{start + length - 1}"


def _prepare_body(data: Body, want_hash: bool) -> tuple[bytes | Readable | None, int, str]:
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
    if isinstance(data, io.TextIOBase):
        raise TypeError("The body file must be opened in binary mode ('rb').")
    start = data.tell()
    if not want_hash:
        try:  # a file on disk: its length without reading it
            return data, os.fstat(data.fileno()).st_size - start, EMPTY_SHA256  # type: ignore[attr-defined]
        except (AttributeError, OSError, io.UnsupportedOperation):
            pass
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


class _ThreadConnection:
    """One thread's connection; closed when the thread ends (its threading.local data goes with it)."""

    __slots__ = ("conn",)

    def __init__(self, conn: http.client.HTTPConnection) -> None:
        self.conn = conn

    def __del__(self) -> None:
        try:
            self.conn.close()
        except Exception:  # at interpreter exit the socket module may be gone already
            pass


def durability_level(durability: str, what: str = "write") -> str:
    """``durability`` when it is a level a ferry daemon answers to (``local``, ``peer``, ``durable``); else ValueError
    in one sentence naming ``what`` asked for it."""
    if durability not in ("local", "peer", "durable"):
        raise ValueError(f"A {what}'s durability is local, peer or durable, not {durability!r}.")
    return durability


def _put_result(headers: dict[str, str]) -> PutResult:
    """A write's answer from its (lower-cased) headers."""
    return PutResult(etag=headers.get("etag"), durability=headers.get("x-ferry-durability"), headers=headers)


def _write_headers(content_type: str | None, write_through: bool, durability: str | None,
                   after: str | None) -> dict[str, str]:
    headers = {"content-type": content_type} if content_type else {}
    if write_through:
        headers["x-ferry-write"] = "through"
    if durability is not None:
        headers["x-ferry-durability"] = durability_level(durability)
    if after is not None:
        headers["x-ferry-after"] = after
    return headers


class PutStream(io.RawIOBase):
    """An object written as a stream (:meth:`S3Client.put_stream`): each block of bytes written goes to the server
    as it fills (HTTP chunked transfer encoding), so the writer spools nothing and the server keeps the bytes as they
    come; ``close()`` ends the body and returns once the server answered (``result``). Not retried: a connection
    that drops fails the write, and the server stores nothing of a body that did not end. ``abort()`` gives up."""

    def __init__(self, conn: http.client.HTTPConnection, name: str) -> None:
        super().__init__()
        self._conn = conn
        self._name = name
        self._buffer = bytearray()
        self._written = 0
        self.result: PutResult | None = None

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._written

    def write(self, data: object) -> int:
        if self.closed:
            raise ValueError(f"{self._name}: the stream is closed")
        view = memoryview(data).cast("B")  # type: ignore[arg-type]
        n = len(view)
        if n >= _SEND_BLOCK:
            self._send_buffer()
            self._send(view)  # a large write goes out as it is, not copied
        else:
            self._buffer += view
            if len(self._buffer) >= _SEND_BLOCK:
                self._send_buffer()
        self._written += n
        return n

    def _send_buffer(self) -> None:
        if self._buffer:
            self._send(memoryview(self._buffer))
            self._buffer = bytearray()

    def _send(self, data: memoryview) -> None:
        try:
            self._conn.send(b"%x\r\n" % len(data))
            self._conn.send(data)
            self._conn.send(b"\r\n")
        except OSError as e:
            self._fail(e)

    def _fail(self, cause: OSError) -> None:
        """The server stopped reading: its answer, when it gave one before closing, says why."""
        try:
            response = self._conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.abort()
            raise FerryConnectionError(None, "ConnectionDropped", f"the connection closed while the body was sent "
                                       f"({cause})", self._name) from cause
        self.abort()
        raise error_from_response(response.status, response.reason, data, self._name) from cause

    def abort(self) -> None:
        """Gives the write up: the connection is closed before the body ends, so nothing of it is stored."""
        self._conn.close()
        super().close()

    def __del__(self) -> None:
        # a stream dropped unclosed (its writer failed) is given up, never ended: a partial body is no object
        if not self.closed:
            self.abort()

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._send_buffer()
            try:
                self._conn.send(b"0\r\n\r\n")
            except OSError as e:
                self._fail(e)
            try:
                response = self._conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as e:
                raise FerryConnectionError(None, "ConnectionDropped", f"no answer to the write ({e})", self._name) from e
            if not 200 <= response.status < 300:
                raise error_from_response(response.status, response.reason, data, self._name)
            self.result = _put_result({k.lower(): v for k, v in response.getheaders()})
        finally:
            self._conn.close()
            super().close()


class S3Client:
    """Path-style S3 requests to one server: ``get``, ``head`` and ``put`` of objects, signed when keys are given.

    ``url`` is the server's base URL (``http://host:port``). With ``access_key`` and ``secret_key`` every request is
    signed with AWS Signature V4 for ``region``. ``timeout`` is the socket timeout in seconds. A client may be shared
    by threads: each thread keeps its own connection; a pickled client (a DataLoader worker under spawn) reconnects
    on its own.
    """

    def __init__(self, url: str, access_key: str | None = None, secret_key: str | None = None,
                 region: str = "us-east-1", timeout: float | None = 60) -> None:
        if bool(access_key) != bool(secret_key):
            raise ValueError("Give both an access key and a secret key, or neither.")
        self.url = base_url(url)
        parts = urlsplit(self.url)
        self.region = region
        self.timeout = timeout
        self._https = parts.scheme == "https"
        self._hostname = parts.hostname or ""
        self._port = parts.port
        self._host = parts.netloc.rpartition("@")[2]
        self._keys = (access_key, secret_key)
        self._signer = Signer(access_key, secret_key, region) if access_key and secret_key else None
        self._reset_connections()

    # -- connections ---------------------------------------------------------------------------

    def _reset_connections(self) -> None:
        self._pid = os.getpid()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: weakref.WeakSet[http.client.HTTPConnection] = weakref.WeakSet()  # for close()

    def _connection(self) -> http.client.HTTPConnection:
        if self._pid != os.getpid():  # forked: the parent's sockets are not ours to use
            self._reset_connections()
        holder: _ThreadConnection | None = getattr(self._local, "holder", None)
        if holder is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            # a file body goes out in blocks of this size (http.client's default, 8 KiB, costs a syscall and a Python
            # loop turn each: a 1 GiB checkpoint went out at under 100 MiB/s)
            holder = _ThreadConnection(cls(self._hostname, self._port, timeout=self.timeout, blocksize=_SEND_BLOCK))
            self._local.holder = holder
            with self._lock:
                self._open.add(holder.conn)
        return holder.conn

    def _drop(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        holder: _ThreadConnection | None = getattr(self._local, "holder", None)
        if holder is not None and holder.conn is conn:
            self._local.holder = None

    def close(self) -> None:
        """Closes every connection this client opened (threads reconnect if they are used again)."""
        with self._lock:
            conns = list(self._open)
            self._open = weakref.WeakSet()
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def __enter__(self: _Client) -> _Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[type[S3Client], tuple[str, str | None, str | None, str, float | None]]:
        return (type(self), (self.url, self._keys[0], self._keys[1], self.region, self.timeout))

    def __repr__(self) -> str:
        signed = "signed" if self._signer else "unsigned"
        return f"{type(self).__name__}({self.url!r}, {signed}, region={self.region!r})"

    # -- one request ---------------------------------------------------------------------------

    def _set_timeout(self, conn: http.client.HTTPConnection, timeout: float | None) -> None:
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)

    def _request(self, method: str, path: str, params: Params = (), headers: dict[str, str] | None = None,
                 body: Body = None, timeout: Timeout = _USE_DEFAULT) -> tuple[int, dict[str, str], bytes]:
        """Sends one request and returns ``(status, headers, body)``; headers are lower-cased.

        Raises FerryError for any status outside 2xx, FerryConnectionError when no answer came.
        """
        params = list(params)
        query = canonical_query(params) if params else ""
        target = path + ("?" + query if query else "")
        name = f"{method} {target}"
        sent = {"host": self._host}
        for key, value in (headers or {}).items():
            sent[key.lower()] = value
        sent_body, length, payload_hash = _prepare_body(body, self._signer is not None)
        if sent_body is not None or method in ("PUT", "POST"):
            sent["content-length"] = str(length)
        if self._signer:
            sent.update(self._signer.sign(method, path, params, sent, payload_hash))
        rewind = sent_body if sent_body is not None and not isinstance(sent_body, bytes) else None
        start = rewind.tell() if rewind is not None else 0  # a file body is sent again from here on a retry

        for attempt in (1, 2):
            conn = self._connection()
            if timeout is not _USE_DEFAULT:
                self._set_timeout(conn, timeout)
            if rewind is not None:
                rewind.seek(start)
            try:
                conn.request(method, target, body=sent_body, headers=sent)
                response = conn.getresponse()
                data = response.read()
            except _DROPPED as e:
                self._drop(conn)
                if attempt == 1:
                    continue
                raise FerryConnectionError(None, "ConnectionDropped",
                                           f"the server at {self.url} closed the connection twice ({e})", name) from e
            except http.client.IncompleteRead as e:
                self._drop(conn)
                if attempt == 1 and method in ("GET", "HEAD"):
                    continue
                raise FerryConnectionError(None, "IncompleteBody",
                                           f"the answer ended after {len(e.partial)} bytes of its body", name) from e
            except (socket.timeout, TimeoutError) as e:
                self._drop(conn)
                raise FerryConnectionError(None, "Timeout", f"no answer from {self.url} within {conn.timeout} s",
                                           name) from e
            except (OSError, http.client.HTTPException) as e:
                self._drop(conn)
                reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
                raise FerryConnectionError(None, "ConnectionFailed", f"cannot talk to {self.url}: {reason}",
                                           name) from e
            finally:
                if timeout is not _USE_DEFAULT:
                    self._set_timeout(conn, self.timeout)
            reply_headers = {k.lower(): v for k, v in response.getheaders()}
            if 200 <= response.status < 300:
                return response.status, reply_headers, data
            raise error_from_response(response.status, response.reason, data, name)
        raise AssertionError("unreachable")

    # -- objects -------------------------------------------------------------------------------

    @staticmethod
    def _object_path(bucket: str, key: str) -> str:
        if not bucket or not key:
            raise ValueError(f"Both a bucket and a key are needed, not bucket={bucket!r} key={key!r}.")
        return "/" + uri_encode(bucket) + "/" + uri_encode(key, safe="/")

    def get(self, bucket: str, key: str, offset: int | None = None, length: int | None = None,
            etag: str | None = None) -> bytes:
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

    def head(self, bucket: str, key: str) -> ObjectInfo:
        """The object's metadata: ``size``, ``etag``, ``last_modified``, ``content_type``, ``durability``
        (ferry's ``x-ferry-durability``, None from other servers) and every response header in ``headers``."""
        _, headers, _ = self._request("HEAD", self._object_path(bucket, key))
        size = headers.get("content-length")
        return ObjectInfo(
            size=int(size) if size is not None else None,
            etag=headers.get("etag"),
            last_modified=headers.get("last-modified"),
            content_type=headers.get("content-type"),
            durability=headers.get("x-ferry-durability"),
            headers=headers,
        )

    def delete(self, bucket: str, key: str) -> None:
        """Deletes the object (S3 answers a delete of a missing key as done, so does this)."""
        self._request("DELETE", self._object_path(bucket, key))

    def put(self, bucket: str, key: str, data: Body, content_type: str | None = None,
            write_through: bool = False, durability: str | None = None, after: str | None = None) -> PutResult:
        """Writes an object from bytes or a seekable binary file; returns ``etag``, ``durability`` and ``headers``.

        ``durability`` is the daemon's ``x-ferry-durability``: ``local`` (journaled on the node, uploaded in
        the background: call ``flush()`` to wait for it) or ``durable`` (in the object store).
        ``write_through=True`` asks a write-back daemon to store this object before answering
        (``x-ferry-write: through``). ``durability`` asks for a level (``local``, ``peer``: on a group member's disk
        too before the answer, ``durable``); the answer says which it got. ``after`` (a prefix of the bucket) has the
        daemon upload this object only once the writes under that prefix acknowledged before it are in the store.
        """
        headers = _write_headers(content_type, write_through, durability, after)
        _, reply, _ = self._request("PUT", self._object_path(bucket, key), headers=headers, body=data)
        return _put_result(reply)

    def put_stream(self, bucket: str, key: str, content_type: str | None = None,
                   write_through: bool = False, durability: str | None = None, after: str | None = None) -> PutStream:
        """Starts writing an object whose length is not known yet; write to the returned stream, then ``close()`` it
        (the answer is its ``result``, as :meth:`put`'s). The bytes go to the server as they are written, on a
        connection of the stream's own; a signed stream is signed with ``UNSIGNED-PAYLOAD`` (the server checks the
        bytes' length and framing, not a digest). ``durability`` and ``after`` as :meth:`put`'s."""
        path = self._object_path(bucket, key)
        sent = {"host": self._host, "transfer-encoding": "chunked"}
        sent.update(_write_headers(content_type, write_through, durability, after))
        if self._signer:
            sent.update(self._signer.sign("PUT", path, [], sent, "UNSIGNED-PAYLOAD"))
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._hostname, self._port, timeout=self.timeout)
        name = f"PUT {path}"
        try:
            conn.putrequest("PUT", path, skip_host=True, skip_accept_encoding=True)
            for header, value in sent.items():
                conn.putheader(header, value)
            conn.endheaders()
        except OSError as e:
            conn.close()
            raise FerryConnectionError(None, "ConnectionFailed", f"cannot talk to {self.url}: {e.strerror or e}",
                                       name) from e
        return PutStream(conn, name)

