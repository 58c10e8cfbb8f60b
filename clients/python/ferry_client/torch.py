"""A PyTorch ``IterableDataset`` over a ferry job: ``FerryIterableDataset``.

Importing this module imports torch; the rest of ``ferry_client`` does not need it.

Each DataLoader worker asks the daemon for its own share of the rank's order
(``order(..., worker=id, workers=num_workers)``). The daemon deals the rank's order in batches of the
job's ``batch_size``, round robin to the workers, which is how a DataLoader with ``batch_size=B`` takes
batches from the workers of an IterableDataset (worker 0's first batch, worker 1's first batch, ...).
So the DataLoader yields the rank's samples in plan order, **provided the DataLoader's batch_size
equals the job's batch_size** (the one given to ``register_job``), and ``drop_last`` is False.
"""

import torch.utils.data

from .client import FerryClient
from .loader import Samples
from .placement import placement


def worker_split():
    """``(worker id, number of workers)`` of the calling DataLoader worker; ``(0, 1)`` outside one."""
    info = torch.utils.data.get_worker_info()
    if info is None:
        return 0, 1
    return info.id, info.num_workers


def _sample_meta(sample, data):
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


class FerryIterableDataset(torch.utils.data.IterableDataset):
    """The samples of one rank of a registered ferry job for one epoch (counted from 1), in plan order.

    ``decode(data: bytes)`` turns a sample's bytes into what the model takes (default: the bytes).
    With ``with_sample=True`` each item is ``(meta, decoded)``, ``meta`` a dict with ``index``,
    ``bucket``, ``key``, ``offset`` and ``length``. ``start`` resumes after that many samples consumed
    by the whole job this epoch. Each worker reads its samples as :class:`ferry_client.Samples` does: a run of a
    shard's samples (the samples of one object within ``window`` samples) in one ranged GET, cut here, and up to
    ``prefetch`` requests ahead on ``threads`` threads (default ``min(prefetch, 8)``), each with a kept-alive
    connection, so small single-object samples come ``prefetch`` at a time. ``url`` None is the node's
    daemon as ``FerryClient()`` finds it (``FERRY_ENDPOINT``, else ``http://127.0.0.1:9099``); ``rank`` None is
    this process's rank from its launcher's environment (torchrun's ``RANK``; 0 with none).

    Use it with ``DataLoader(dataset, batch_size=B, num_workers=N)`` where ``B`` is the job's
    ``batch_size``. Every worker opens its own connections (they do not survive a fork). For several
    epochs, call ``set_epoch(e)`` before iterating the DataLoader again (without persistent_workers).
    """

    def __init__(self, url, job, epoch=1, rank=None, decode=None, start=0, prefetch=8, with_sample=False,
                 access_key=None, secret_key=None, region="us-east-1", timeout=60, threads=None, window=256):
        super().__init__()
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
        self.prefetch = prefetch
        self.with_sample = with_sample
        self.threads = threads
        self.window = window
        self._client_args = dict(access_key=access_key, secret_key=secret_key, region=region, timeout=timeout)

    def set_epoch(self, epoch, start=0):
        """Reads ``epoch`` next time, from ``start``."""
        self.epoch = epoch
        self.start = start

    def __iter__(self):
        worker, workers = worker_split()
        client = FerryClient(self.url, **self._client_args)  # one per worker process
        samples = Samples(client, self.job, self.epoch, self.rank, worker=worker, workers=workers,
                          start=self.start, prefetch=self.prefetch, threads=self.threads, window=self.window, meta=True)
        try:
            for sample, data in samples:
                item = self.decode(data) if self.decode is not None else data
                yield (_sample_meta(sample, data), item) if self.with_sample else item
        finally:
            client.close()
