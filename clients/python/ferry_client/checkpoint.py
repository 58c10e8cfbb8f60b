"""PyTorch's distributed checkpoint (``torch.distributed.checkpoint``, DCP) through the node's ferry daemon.

``FerryStorageWriter`` and ``FerryStorageReader`` are DCP's ``FileSystemWriter`` and ``FileSystemReader`` with their
files in a bucket (``s3://BUCKET/PREFIX``) behind the daemon, so a daemon with ``--write-back`` acknowledges each
rank's file once it is on the node's disk and uploads it in the background::

    writer = FerryStorageWriter("s3://ckpt/run-7/step-1000")
    dcp.save(state_dict, storage_writer=writer)      # returns once every rank's bytes are acknowledged
    writer.wait_durable()                            # returns once the checkpoint is in the object store
    dcp.load(state_dict, storage_reader=FerryStorageReader("s3://ckpt/run-7/step-1000"))

A checkpoint is complete when its ``.metadata`` file exists, and that file reaches the object store only after
every other file of the checkpoint is there: the writer waits at the daemon's fence for the checkpoint's prefix, then
writes the metadata through to the store. By default that happens in the background (``save`` returns at the
acknowledgement; ``wait_durable()`` joins it); ``FerryStorageWriter(..., durable=True)`` makes ``save`` itself wait.
A reader in the same process waits for a checkpoint this process is still finishing. See docs/checkpoints.md.
"""

from __future__ import annotations

import concurrent.futures
import io
import os
import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any, cast

from torch.distributed.checkpoint.filesystem import FileSystemBase, FileSystemReader, FileSystemWriter

from .client import FerryClient
from .errors import FerryError

__all__ = ["FerryStorageReader", "FerryStorageWriter", "wait_durable"]

_METADATA = ".metadata"
_READ_BUFFER = 8 << 20  # bytes a reader asks for at a time (a ranged GET each)
_READS_IN_FLIGHT = 8  # ranged GETs of one file under way at once

# checkpoints this process is finishing in the background, by path: a reader of one waits for it
_finishing: dict[str, _Finisher] = {}
_finishing_lock = threading.Lock()


def _split(path: str | os.PathLike[str]) -> tuple[str, str]:
    text = str(path)
    if not text.startswith("s3://"):
        raise ValueError(f"A checkpoint through ferry lives in a bucket: give s3://BUCKET/PREFIX, not {text!r}.")
    bucket, _, key = text[len("s3://"):].partition("/")
    if not bucket or not key.strip("/"):
        raise ValueError(f"A checkpoint path names a bucket and a prefix in it (s3://BUCKET/PREFIX), not {text!r}.")
    return bucket, key.strip("/")


class _RangedReader(io.RawIOBase):
    """An object read by ranged GETs of ``_READ_BUFFER`` bytes, ``_READS_IN_FLIGHT`` at once ahead of where DCP reads
    (it reads a rank's file front to back, seeking forward past what it does not load): a cold load draws on as many
    connections to the store as a parallel reader would, a warm one on the daemon's tier as fast. At most that many
    chunks are held; a seek backward past them reads again."""

    def __init__(self, client: FerryClient, bucket: str, key: str, size: int, etag: str | None) -> None:
        super().__init__()
        self._client = client
        self._bucket = bucket
        self._key = key
        self._size = size
        self._etag = etag
        self._pos = 0
        self._pool = concurrent.futures.ThreadPoolExecutor(_READS_IN_FLIGHT, thread_name_prefix="ferry-checkpoint-read")
        self._chunks: dict[int, concurrent.futures.Future[bytes]] = {}

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def _chunk(self, index: int) -> concurrent.futures.Future[bytes]:
        future = self._chunks.get(index)
        if future is None:
            offset = index * _READ_BUFFER
            length = min(_READ_BUFFER, self._size - offset)
            future = self._pool.submit(self._client.get, self._bucket, self._key, offset, length, self._etag)
            self._chunks[index] = future
        return future

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._pos >= self._size or len(view) == 0:
            return 0
        index = self._pos // _READ_BUFFER
        for behind in [i for i in self._chunks if i < index]:
            self._chunks.pop(behind).cancel()  # read past: let it go
        last = (self._size - 1) // _READ_BUFFER
        for ahead in range(index, min(last, index + _READS_IN_FLIGHT - 1) + 1):
            self._chunk(ahead)
        data = self._chunk(index).result()
        start = self._pos - index * _READ_BUFFER
        n = min(len(view), len(data) - start)
        if n <= 0:
            raise OSError(f"{self._key} ended at {self._pos} of {self._size} bytes: it changed while it was read")
        view[:n] = data[start:start + n]
        self._pos += n
        return n

    def close(self) -> None:
        if not self.closed:
            for future in self._chunks.values():
                future.cancel()
            self._chunks.clear()
            self._pool.shutdown(wait=False, cancel_futures=True)
        super().close()


class _Held(io.BytesIO):
    """Bytes written and kept, readable after the writer closed the stream."""

    def __init__(self) -> None:
        super().__init__()
        self._value: bytes | None = None

    def close(self) -> None:
        if not self.closed:
            self._value = self.getvalue()
        super().close()

    def value(self) -> bytes:
        return self._value if self._value is not None else self.getvalue()


class _Finisher:
    """Writes a checkpoint's metadata once the rest of it is durable: the daemon's fence for its prefix, then the
    metadata written through to the store."""

    def __init__(self, fs: FerryFileSystem, path: str, data: bytes) -> None:
        self._fs = fs
        self.path = path
        self._data = data
        self._error: BaseException | None = None
        self._done = threading.Event()

    def run(self) -> None:
        try:
            bucket, key = _split(self.path)
            prefix = key.rsplit("/", 1)[0] + "/"
            self._fs.client.flush(bucket=bucket, prefix=prefix)
            self._fs.client.put(bucket, key, self._data, write_through=True)
        except BaseException as e:  # kept for wait(), which raises it
            self._error = e
        finally:
            self._done.set()
            with _finishing_lock:
                if _finishing.get(self.path) is self:
                    del _finishing[self.path]

    def wait(self, timeout_s: float | None = None) -> None:
        if not self._done.wait(timeout_s):
            raise TimeoutError(f"The checkpoint {self.path.rsplit('/', 1)[0]} was not durable within {timeout_s} s.")
        if self._error is not None:
            raise FerryError(None, "CheckpointNotDurable", f"The checkpoint {self.path.rsplit('/', 1)[0]} did not "
                             f"reach the object store: {self._error}") from self._error


class FerryFileSystem(FileSystemBase):
    """DCP's file system as objects behind the daemon: a path is ``s3://BUCKET/KEY``; a file written is one PUT whose
    body streams to the daemon as DCP writes it, acknowledged when it is closed; a file read is read by ranged GETs;
    folders do not exist (a prefix needs no making)."""

    def __init__(self, client: FerryClient, durable: bool) -> None:
        self.client = client
        self.durable = durable
        self.finisher: _Finisher | None = None
        self._held: dict[str, bytes] = {}

    @contextmanager
    def create_stream(self, path: str | os.PathLike[str], mode: str) -> Generator[io.IOBase, None, None]:
        bucket, key = _split(path)
        if "w" in mode:
            if key.endswith(_METADATA + ".tmp"):
                held = _Held()  # the metadata is written last, by rename(): held until then
                yield held
                self._held[str(path)] = held.value()
                return
            stream = self.client.put_stream(bucket, key)  # the bytes go to the daemon as DCP writes them
            try:
                yield cast(io.IOBase, stream)
            except BaseException:
                stream.abort()  # a partial body is never an object
                raise
            stream.close()  # ends the body and waits for the acknowledgement (a no-op if DCP closed it already)
            return
        self._wait_finishing(str(path))
        try:
            info = self.client.head(bucket, key)
        except FerryError as e:
            if e.status == 404:
                raise FileNotFoundError(f"The checkpoint file {path} is missing: the checkpoint is incomplete or was "
                                        "never written.") from None
            raise
        reader = io.BufferedReader(_RangedReader(self.client, bucket, key, info.size or 0, info.etag), buffer_size=_READ_BUFFER)
        try:
            yield cast(io.IOBase, reader)
        finally:
            reader.close()

    @staticmethod
    def _wait_finishing(path: str) -> None:
        with _finishing_lock:
            finisher = _finishing.get(path)
        if finisher is not None:
            finisher.wait()

    def concat_path(self, path: str | os.PathLike[str], suffix: str) -> str:
        return str(path).rstrip("/") + "/" + suffix

    def rename(self, path: str | os.PathLike[str], new_path: str | os.PathLike[str]) -> None:
        data = self._held.pop(str(path), None)
        if data is None:
            raise ValueError(f"Only a checkpoint's metadata is renamed into place, not {path}.")
        finisher = _Finisher(self, str(new_path), data)
        self.finisher = finisher
        if self.durable:
            finisher.run()
            finisher.wait()
            return
        with _finishing_lock:
            _finishing[str(new_path)] = finisher
        threading.Thread(target=finisher.run, name="ferry-checkpoint-finish", daemon=True).start()

    def init_path(self, path: str | os.PathLike[str]) -> str:
        _split(path)
        return str(path).rstrip("/")

    def mkdir(self, path: str | os.PathLike[str]) -> None:
        _split(path)  # a prefix needs no making

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike[str]) -> bool:
        try:
            _split(checkpoint_id)
            return True
        except ValueError:
            return False

    def exists(self, path: str | os.PathLike[str]) -> bool:
        bucket, key = _split(path)
        try:
            self.client.head(bucket, key)
            return True
        except FerryError as e:
            if e.status == 404:
                return False
            raise

    def rm_file(self, path: str | os.PathLike[str]) -> None:
        bucket, key = _split(path)
        self.client.delete(bucket, key)


class FerryStorageWriter(FileSystemWriter):
    """A DCP storage writer into ``s3://BUCKET/PREFIX`` through the node's daemon (``FerryClient()``'s endpoint, or
    ``endpoint``). Each rank writes one file per rank (``single_file_per_rank``), acknowledged by the daemon; the
    metadata follows once they are all durable (in the background unless ``durable``)."""

    def __init__(self, path: str | os.PathLike[str], endpoint: str | None = None, durable: bool = False,
                 thread_count: int = 1, client: FerryClient | None = None, **kwargs: Any) -> None:
        super().__init__(path, single_file_per_rank=True, sync_files=False, thread_count=thread_count, **kwargs)
        self._ferry = FerryFileSystem(client or FerryClient(endpoint), durable)
        self.fs = cast(Any, self._ferry)  # DCP's writer calls only FileSystemBase's methods on it
        self.path = self._ferry.init_path(path)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike[str]) -> bool:
        return FerryFileSystem.validate_checkpoint_id(checkpoint_id)

    def wait_durable(self, timeout_s: float | None = None) -> None:
        """Waits until the last checkpoint this writer saved is in the object store, metadata last; raises when it
        did not get there (the daemon's fence failed or timed out). On a rank that wrote no metadata, returns at once
        (the coordinator's writer says when the checkpoint is durable)."""
        if self._ferry.finisher is not None:
            self._ferry.finisher.wait(timeout_s)


class FerryStorageReader(FileSystemReader):
    """A DCP storage reader of ``s3://BUCKET/PREFIX`` through the node's daemon, which answers from its local tier
    (or a write not uploaded yet) when it can, else from the store."""

    def __init__(self, path: str | os.PathLike[str], endpoint: str | None = None, client: FerryClient | None = None) -> None:
        super().__init__(path)
        self._ferry = FerryFileSystem(client or FerryClient(endpoint), durable=False)
        self.fs = cast(Any, self._ferry)  # DCP's reader calls only FileSystemBase's methods on it
        self.path = self._ferry.init_path(path)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike[str]) -> bool:
        return FerryFileSystem.validate_checkpoint_id(checkpoint_id)


def wait_durable(path: str | os.PathLike[str], timeout_s: float | None = None) -> None:
    """Waits until the checkpoint at ``path`` that this process is finishing is in the object store (no-op when none is)."""
    metadata = str(path).rstrip("/") + "/" + _METADATA
    with _finishing_lock:
        finisher = _finishing.get(metadata)
    if finisher is not None:
        finisher.wait(timeout_s)
