"""PyTorch's distributed checkpoint (``torch.distributed.checkpoint``, DCP) through the node's ferry daemon.

``FerryStorageWriter`` and ``FerryStorageReader`` are DCP's ``FileSystemWriter`` and ``FileSystemReader`` with their
files in a bucket (``s3://BUCKET/PREFIX``) behind the daemon, so a daemon with ``--write-back`` acknowledges each
rank's file once it is on the node's disk and uploads it in the background::

    writer = FerryStorageWriter("s3://ckpt/run-7/step-1000")
    dcp.save(state_dict, storage_writer=writer)      # returns once every rank's bytes are acknowledged
    writer.wait_durable()                            # returns once the checkpoint is in the object store
    dcp.load(state_dict, storage_reader=FerryStorageReader("s3://ckpt/run-7/step-1000"))

A checkpoint is complete when its ``.metadata`` file exists, and that file reaches the object store only after
every other file of the checkpoint the daemon holds: the writer sends it last with ``x-ferry-after: <prefix>``, and
the daemon's write-back uploads it once the files under the prefix written before it are durable (a daemon that
writes through has them in the store already). ``save`` returns when the metadata is acknowledged;
``wait_durable()`` waits at the daemon's fence for the checkpoint's prefix; ``FerryStorageWriter(..., durable=True)``
makes ``save`` itself wait. Each file is written at the level ``durability`` asks (``peer`` by default: on the node's
disk and a group member's before the answer; a daemon in no group answers ``local``). See docs/checkpoints.md.
"""

from __future__ import annotations

import concurrent.futures
import io
import os
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any, cast

from torch.distributed.checkpoint.filesystem import FileSystemBase, FileSystemReader, FileSystemWriter

from .client import FerryClient
from .errors import FerryError
from .s3 import durability_level

__all__ = ["FerryStorageReader", "FerryStorageWriter", "wait_durable"]

_METADATA = ".metadata"
_READ_BUFFER = 8 << 20  # bytes a reader asks for at a time (a ranged GET each)
_READS_IN_FLIGHT = 8  # ranged GETs of one file under way at once

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


class FerryFileSystem(FileSystemBase):
    """DCP's file system as objects behind the daemon: a path is ``s3://BUCKET/KEY``; a file written is one PUT whose
    body streams to the daemon as DCP writes it, acknowledged when it is closed; a file read is read by ranged GETs;
    folders do not exist (a prefix needs no making)."""

    def __init__(self, client: FerryClient, durable: bool, durability: str | None) -> None:
        self.client = client
        self.durable = durable
        self.durability = durability
        self.levels: list[str] = []  # what the daemon answered for each file this process wrote, in order
        self.saved: str | None = None  # the last checkpoint whose metadata this process wrote
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
            stream = self.client.put_stream(bucket, key, durability=self.durability)  # the bytes go as DCP writes them
            try:
                yield cast(io.IOBase, stream)
            except BaseException:
                stream.abort()  # a partial body is never an object
                raise
            stream.close()  # ends the body and waits for the acknowledgement (a no-op if DCP closed it already)
            if stream.result is not None:
                self.levels.append(stream.result.durability or "durable")
            return
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

    def concat_path(self, path: str | os.PathLike[str], suffix: str) -> str:
        return str(path).rstrip("/") + "/" + suffix

    def rename(self, path: str | os.PathLike[str], new_path: str | os.PathLike[str]) -> None:
        data = self._held.pop(str(path), None)
        if data is None:
            raise ValueError(f"Only a checkpoint's metadata is renamed into place, not {path}.")
        bucket, key = _split(new_path)
        prefix = key.rsplit("/", 1)[0] + "/"
        # uploaded by the daemon only once the checkpoint's files written before it are in the store
        answer = self.client.put(bucket, key, data, durability=self.durability, after=prefix)
        self.levels.append(answer.durability or "durable")
        self.saved = str(new_path)
        if self.durable:
            self.wait_durable(None)

    def check_room(self, planned: int) -> None:
        """Raises ValueError when ``planned`` bytes exceed what the daemon's write-back quota has left; a server
        that is not a write-back ferry daemon (or a durable save) is not asked."""
        if self.durability == "durable" or planned <= 0:
            return
        try:
            status = self.client.status()
        except FerryError:
            return
        write_back = status.get("write_back") if isinstance(status, dict) else None
        if not isinstance(write_back, dict) or "quota_bytes" not in write_back:
            return
        quota, pending = int(write_back["quota_bytes"]), int(write_back.get("pending_bytes", 0))
        # the ranks of this node (torchrun's LOCAL_WORLD_SIZE) share its daemon and save about as much each
        try:
            here = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
        except ValueError:
            here = 1
        if planned * here > quota - pending:
            ranks = f"This rank's checkpoint files hold about {planned} bytes" + (
                f", {planned * here} for the {here} ranks of this node," if here > 1 else ",")
            raise ValueError(f"{ranks} more than the {quota - pending} left of the daemon's write-back quota of "
                             f"{quota} ({pending} pending): raise ferry serve --write-back-quota, or save with "
                             "durability=\"durable\".")

    def wait_durable(self, timeout_s: float | None) -> None:
        """Waits at the daemon's fence for the prefix of the last checkpoint this process wrote the metadata of."""
        if self.saved is not None:
            _fence(self.client, self.saved, timeout_s)

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
            # DCP asks only to warn of an overwrite: a store the daemon cannot reach now (5xx) must not stop a save
            # that write-back exists to take
            if e.status == 404 or (e.status or 0) >= 500:
                return False
            raise

    def rm_file(self, path: str | os.PathLike[str]) -> None:
        bucket, key = _split(path)
        self.client.delete(bucket, key)


class FerryStorageWriter(FileSystemWriter):
    """A DCP storage writer into ``s3://BUCKET/PREFIX`` through the node's daemon (``FerryClient()``'s endpoint, or
    ``endpoint``). Each rank writes one file (``single_file_per_rank``), acknowledged by the daemon at the level
    ``durability`` asks (``local``, ``peer``, the default, or ``durable``); the metadata goes last and reaches the store
    after the files (``save`` waits for that too when ``durable``). ``levels`` lists what the daemon answered."""

    def __init__(self, path: str | os.PathLike[str], endpoint: str | None = None, durable: bool = False,
                 thread_count: int = 1, client: FerryClient | None = None, durability: str = "peer",
                 **kwargs: Any) -> None:
        super().__init__(path, single_file_per_rank=True, sync_files=False, thread_count=thread_count, **kwargs)
        self._ferry = FerryFileSystem(client or FerryClient(endpoint), durable, durability_level(durability, "checkpoint"))
        self.fs = cast(Any, self._ferry)  # DCP's writer calls only FileSystemBase's methods on it
        self.path = self._ferry.init_path(path)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike[str]) -> bool:
        return FerryFileSystem.validate_checkpoint_id(checkpoint_id)

    def prepare_local_plan(self, plan: Any) -> Any:
        """Refuses, before anything is written, a save whose files would not fit the room left in the daemon's
        write-back quota (past it the daemon writes through to the store: no longer a stall on the node's disk)."""
        planned = 0
        for item in plan.items:
            planned += item.tensor_storage_size() or 0
            bytes_io = getattr(item, "bytes_io_data", None)
            planned += getattr(bytes_io, "nbytes", 0) or 0
        self._ferry.check_room(planned)
        return super().prepare_local_plan(plan)

    @property
    def levels(self) -> list[str]:
        """The durability the daemon answered for each file this writer wrote, in order (``local``, ``peer``,
        ``durable``): the weakest is what the save can count on."""
        return list(self._ferry.levels)

    def wait_durable(self, timeout_s: float | None = None) -> None:
        """Waits until the last checkpoint this writer saved is in the object store, metadata last; raises when it
        did not get there (the daemon's fence failed or timed out). On a rank that wrote no metadata, returns at once
        (the coordinator's writer says when the checkpoint is durable)."""
        self._ferry.wait_durable(timeout_s)


class FerryStorageReader(FileSystemReader):
    """A DCP storage reader of ``s3://BUCKET/PREFIX`` through the node's daemon, which answers from its local tier
    (or a write not uploaded yet) when it can, else from the store."""

    def __init__(self, path: str | os.PathLike[str], endpoint: str | None = None, client: FerryClient | None = None) -> None:
        super().__init__(path)
        self._ferry = FerryFileSystem(client or FerryClient(endpoint), durable=False, durability=None)
        self.fs = cast(Any, self._ferry)  # DCP's reader calls only FileSystemBase's methods on it
        self.path = self._ferry.init_path(path)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike[str]) -> bool:
        return FerryFileSystem.validate_checkpoint_id(checkpoint_id)


def _fence(client: FerryClient, metadata_path: str, timeout_s: float | None) -> None:
    bucket, key = _split(metadata_path)
    checkpoint = metadata_path.rsplit("/", 1)[0]
    try:
        client.flush(timeout_s, bucket=bucket, prefix=key.rsplit("/", 1)[0] + "/")
    except FerryError as e:
        if e.code == "FlushTimedOut":
            raise TimeoutError(f"The checkpoint {checkpoint} was not durable within {timeout_s} s.") from e
        raise FerryError(e.status, "CheckpointNotDurable", f"The checkpoint {checkpoint} did not reach the object "
                         f"store: {e}") from e


def wait_durable(path: str | os.PathLike[str], timeout_s: float | None = None, endpoint: str | None = None,
                 client: FerryClient | None = None) -> None:
    """Waits until the checkpoint at ``path`` (``s3://BUCKET/PREFIX``) is in the object store, its metadata last: the
    fence of the daemon it was written through (``FerryClient()``'s endpoint, or ``endpoint``)."""
    _fence(client or FerryClient(endpoint), str(path).rstrip("/") + "/" + _METADATA, timeout_s)
