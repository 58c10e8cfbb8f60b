"""A PyTorch ``IterableDataset`` over a ferry job: ``FerryIterableDataset``.

Importing this module imports torch; the rest of ``ferry_client`` does not need it.

Each DataLoader worker asks the daemon for its own share of the rank's order
(``order(..., worker=id, workers=num_workers)``). The daemon deals the rank's order in batches of the
job's ``batch_size``, round robin, to the workers, which is how a DataLoader with ``batch_size=B`` takes
batches from the workers of an IterableDataset (worker 0's first batch, worker 1's first batch, ...).
So the DataLoader yields the rank's samples in plan order, **provided the DataLoader's batch_size
equals the job's batch_size** (the one given to ``register_job``), and ``drop_last`` is False.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any, Callable

import torch.utils.data

from .client import FerryClient
from .decoded import Decoded, DecodedCache, decode_name
from .loader import Samples
from .placement import placement
from .settings import ReadSettings

__all__ = ["FerryIterableDataset", "worker_split"]


def worker_split() -> tuple[int, int]:
    """``(worker id, number of workers)`` of the calling DataLoader worker; ``(0, 1)`` outside one."""
    info = torch.utils.data.get_worker_info()
    if info is None:
        return 0, 1
    return info.id, info.num_workers


def _sample_meta(sample: Mapping[str, Any], data: bytes) -> dict[str, Any]:
    """The sample's identity with the same keys and types for every sample, so default_collate can batch it."""
    offset = sample.get("offset")
    length = sample.get("length")
    index = sample.get("index")
    return {
        "index": int(index) if index is not None else -1,
        "bucket": str(sample.get("bucket", "")),
        "key": str(sample.get("key", "")),
        "offset": int(offset) if offset is not None else 0,
        "length": int(length) if length is not None else len(data),
    }


def _count(name: str, value: object, least: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ValueError(f"{name} must be an integer of at least {least}, not {value!r}.")
    return value


class FerryIterableDataset(torch.utils.data.IterableDataset[Any]):
    """The samples of one rank of a registered ferry job for one epoch (counted from 1), in plan order.

    ``decode(data: bytes)`` turns a sample's bytes into what the model takes (default: the bytes).
    With ``decode_version`` (a string naming this version of ``decode``; change it when the function changes), the
    daemon keeps decoded samples on its tier when that gives more samples/s (docs/decoded-cache.md): a later epoch
    reads them back instead of the encoded bytes and the decode. ``transform`` runs after the decode (or the read
    of a kept decode) every epoch: random augmentation goes there, never in ``decode``, whose output is kept.
    With ``with_sample=True`` each item is ``(meta, decoded)``, ``meta`` a dict with ``index``,
    ``bucket``, ``key``, ``offset`` and ``length``. ``start`` resumes after that many samples consumed
    by the whole job this epoch. Each worker reads its samples as :class:`ferry_client.Samples` does, with
    ``settings`` (a :class:`ferry_client.ReadSettings`; ``prefetch``, ``threads`` and ``window`` given as keywords
    replace its fields): a run of a shard's samples (the samples of one object within ``window`` samples) in one
    ranged GET, cut here, and up to ``prefetch`` requests ahead on ``threads`` threads (default
    ``min(prefetch, 8)``), each with a kept-alive connection, so small single-object samples come ``prefetch`` at a
    time. ``url`` None is the node's daemon as ``FerryClient()`` finds it (``FERRY_ENDPOINT``, else
    ``http://127.0.0.1:9099``); ``rank`` None is this process's rank from its launcher's environment (torchrun's
    ``RANK``; 0 with none).

    Use it with ``DataLoader(dataset, batch_size=B, num_workers=N)`` where ``B`` is the job's
    ``batch_size``. Every worker opens its own connections (they do not survive a fork). For several
    epochs, call ``set_epoch(e)`` before iterating the DataLoader again (without persistent_workers).

    ``len(dataset)`` is the number of samples iterating it yields (asked of the daemon). ``state_dict(num_samples)``
    and ``load_state_dict(state)`` resume mid-epoch as MosaicML Streaming's ``StreamingDataset`` does: save the state
    with the model, load it into a new dataset, and its next iteration of the saved epoch reads on from where the
    job stood.
    """

    def __init__(self, url: str | None, job: str, epoch: int = 1, rank: int | None = None,
                 decode: Callable[[bytes], Any] | None = None, start: int = 0, prefetch: int | None = None,
                 with_sample: bool = False, access_key: str | None = None, secret_key: str | None = None,
                 region: str = "us-east-1", timeout: float | None = 60, threads: int | None = None,
                 window: int | None = None, *, settings: ReadSettings | None = None, decode_version: str | None = None,
                 transform: Callable[[Any], Any] | None = None) -> None:
        super().__init__()
        if decode_version is not None and decode is None:
            raise ValueError("decode_version names a decode: pass decode= too.")
        self.decoded_as = decode_name(decode, decode_version) if decode is not None and decode_version is not None else None
        self.transform = transform
        self.url = url
        self.job = job
        self.epoch = epoch
        if rank is None:
            rank = placement().rank
            if rank < 0:
                raise ValueError("This process's rank is not in its environment (a pod of several ranks outside "
                                 "torchrun): pass rank=, or start it with torchrun.")
        self.rank = rank
        self.decode = decode
        self.start = start
        self.with_sample = with_sample
        self.settings = (settings or ReadSettings()).with_changes(prefetch=prefetch, threads=threads, window=window)
        self._client_args: dict[str, Any] = dict(access_key=access_key, secret_key=secret_key, region=region,
                                                 timeout=timeout)
        self._resumed: tuple[int, int] | None = None  # (epoch, position) from load_state_dict, until another epoch
        self._length: tuple[tuple[int, int, int, int], int] | None = None  # ((epoch, start, worker, workers), n)

    @property
    def prefetch(self) -> int:
        return self.settings.prefetch

    @property
    def threads(self) -> int | None:
        return self.settings.threads

    @property
    def window(self) -> int:
        return self.settings.window

    def set_epoch(self, epoch: int, start: int | None = None) -> None:
        """Reads ``epoch`` next time, from ``start``: by default 0, or, for the epoch a :meth:`load_state_dict`
        named, the position it saved."""
        if self._resumed is not None and self._resumed[0] != epoch:
            self._resumed = None  # the resumed epoch is over: the next ones start at their beginning
        if start is None:
            start = self._resumed[1] if self._resumed is not None else 0
        self.epoch = epoch
        self.start = start

    def state_dict(self, num_samples: int, from_beginning: bool = False) -> dict[str, Any]:
        """Where the job stands in this epoch, to save with the model: ``{"job", "epoch", "sample_in_epoch"}``.

        ``num_samples`` is the samples the whole job consumed since this dataset's ``start`` (every rank's, as
        MosaicML Streaming counts them: ``ranks * batch_size * steps`` in data-parallel training); with
        ``from_beginning=True``, since the epoch began, which is :class:`ferry_client.StepReporter`'s ``position``.
        The dataset cannot count them itself: with DataLoader workers it is iterated in other processes.
        """
        consumed = _count("num_samples", num_samples, 0)
        return {"job": self.job, "epoch": self.epoch,
                "sample_in_epoch": consumed if from_beginning else self.start + consumed}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resumes where :meth:`state_dict` saved: the next iteration of its epoch reads on from its
        ``sample_in_epoch`` (``set_epoch`` of that epoch keeps it; of another, starts that one from 0). A
        :meth:`FerryClient.checkpoint <ferry_client.FerryClient.checkpoint>` answer (``epoch``, ``position``) does
        too: it is what ``register_job(resume=)`` takes when the job resumes on another world."""
        saved_job = state.get("job")
        if saved_job is not None and saved_job != self.job:
            raise ValueError(f"The state is job {saved_job!r}'s, not {self.job!r}'s.")
        epoch = _count("epoch", state.get("epoch"), 1)
        position = _count("sample_in_epoch", state.get("sample_in_epoch", state.get("position")), 0)
        self._resumed = (epoch, position)
        self.epoch = epoch
        self.start = position

    def __len__(self) -> int:
        """The samples iterating here yields: in the main process the rank's from ``start`` (what a DataLoader's
        ``len()`` counts), in a DataLoader worker that worker's share. Asks the daemon for the order, once per epoch
        and start."""
        worker, workers = worker_split()
        key = (self.epoch, self.start, worker, workers)
        if self._length is None or self._length[0] != key:
            client = FerryClient(self.url, **self._client_args)
            try:
                spans = client.order_spans(self.job, self.epoch, self.rank, worker, workers, self.start)
            finally:
                client.close()
            self._length = (key, sum(len(span["samples"]) for span in spans))
        return self._length[1]

    def __iter__(self) -> Iterator[Any]:
        worker, workers = worker_split()
        client = FerryClient(self.url, **self._client_args)  # one per worker process
        # with a decode, its cost is measured (the advisor says what keeping decodes would give); with a version,
        # they are kept
        cache = DecodedCache(client, self.job, self.epoch, self.decoded_as, workers) if self.decode is not None else None
        samples = Samples(client, self.job, self.epoch, self.rank, worker=worker, workers=workers, start=self.start,
                          meta=True, settings=self.settings, decoded=cache if self.decoded_as else None)
        try:
            for sample, data in samples:
                if isinstance(data, Decoded):
                    assert cache is not None
                    item = cache.unpacked(data)
                    data = b""
                elif self.decode is None:
                    item = data
                else:
                    began = time.thread_time()  # CPU: what a kept decode saves the loader's cores
                    item = self.decode(data)
                    if cache is not None:
                        cache.decoded(sample, item, time.thread_time() - began)
                if self.transform is not None:
                    item = self.transform(item)
                yield (_sample_meta(sample, data), item) if self.with_sample else item
            if cache is not None:
                cache.close()
        finally:
            client.close()
