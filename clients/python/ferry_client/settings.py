"""Settings objects: how the daemon plans a job (:class:`JobSettings`) and how a loader reads it (:class:`ReadSettings`).

Each is a frozen dataclass checked when it is made, with a message that names the field; every field has its
default next to it. They group what :meth:`FerryClient.register_job`, :class:`ferry_client.Samples` and
``FerryIterableDataset`` also take one keyword at a time: a keyword given there replaces that field of the settings
(:meth:`with_changes`), so ``register_job(job, manifest=m, settings=base, seed=epoch_seed)`` works.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, TypeVar

__all__ = ["JobSettings", "ReadSettings"]

PARTITIONS = ("node", "global", "auto")

_S = TypeVar("_S", "JobSettings", "ReadSettings")


def _positive_int(name: str, value: object) -> None:
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value!r}.")


def _non_negative_int(name: str, value: object) -> None:
    if not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, not {value!r}.")


def _with_changes(settings: _S, changes: dict[str, Any]) -> _S:
    given = {name: value for name, value in changes.items() if value is not None}
    return dataclasses.replace(settings, **given) if given else settings


@dataclasses.dataclass(frozen=True)
class JobSettings:
    """How the daemon plans a job's epochs: the plan arguments of :meth:`FerryClient.register_job`.

    ``seed`` (0) seeds the shuffle. ``batch_size`` (1) is the batch the loaders take, which the order endpoint deals
    to workers: the DataLoader's ``batch_size`` must equal it. ``partition`` (None: the daemon's ``auto``, node for
    a world of more than one node) is ``"node"`` (each node reads its own shards every epoch), ``"global"`` (every
    node reads a share of every shard) or ``"auto"``. ``canonical_nodes`` (None: the world's nodes) fixes the node
    plan's canonical node count; a job resumed on another world passes the count it started with.
    ``mix_fraction`` (None: the daemon's, 0 to 1) moves that share of each node's shards to another node each epoch;
    ``shuffle_block_shards`` (None: the daemon's) is how many shards' samples are shuffled together.
    """

    seed: int = 0
    batch_size: int = 1
    partition: Optional[str] = None
    canonical_nodes: Optional[int] = None
    mix_fraction: Optional[float] = None
    shuffle_block_shards: Optional[int] = None

    def __post_init__(self) -> None:
        _positive_int("batch_size", self.batch_size)
        if self.partition is not None and self.partition not in PARTITIONS:
            raise ValueError(f"partition must be 'node', 'global' or 'auto', not {self.partition!r}.")
        if self.canonical_nodes is not None:
            _positive_int("canonical_nodes", self.canonical_nodes)
        if self.mix_fraction is not None and (
                not isinstance(self.mix_fraction, (int, float)) or not 0 <= self.mix_fraction <= 1):
            raise ValueError(f"mix_fraction must be a number from 0 to 1, not {self.mix_fraction!r}.")
        if self.shuffle_block_shards is not None:
            _positive_int("shuffle_block_shards", self.shuffle_block_shards)

    def with_changes(self, **changes: Any) -> JobSettings:
        """These settings with the fields given (not None) replaced, checked again."""
        return _with_changes(self, changes)


@dataclasses.dataclass(frozen=True)
class ReadSettings:
    """How a loader worker reads its samples (:class:`ferry_client.Samples`, ``FerryIterableDataset``).

    The samples of one object that a window of ``window`` (256) samples holds are read together, neighbours merged
    into one ranged GET while the hole between them is at most ``max_gap`` (1 MiB) and the read at most
    ``max_read`` (64 MiB) bytes (:func:`ferry_client.plan_reads`). Up to ``prefetch`` (8) reads are ahead of the
    consumer, on ``threads`` threads (None: ``min(prefetch, 8)``), holding at most ``ahead_bytes`` (64 MiB); how
    many of the ``prefetch`` are used follows what is measured (:func:`ferry_client.loader.reads_ahead`).
    """

    prefetch: int = 8
    threads: Optional[int] = None
    window: int = 256
    max_gap: int = 1 << 20
    max_read: int = 64 << 20
    ahead_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        _positive_int("prefetch", self.prefetch)
        if self.threads is not None:
            _positive_int("threads", self.threads)
        _positive_int("window", self.window)
        _non_negative_int("max_gap", self.max_gap)
        _positive_int("max_read", self.max_read)
        _non_negative_int("ahead_bytes", self.ahead_bytes)

    @property
    def reading_threads(self) -> int:
        """The threads a worker reads on: ``threads``, else ``min(prefetch, 8)``."""
        return self.threads if self.threads is not None else min(self.prefetch, 8)

    def with_changes(self, **changes: Any) -> ReadSettings:
        """These settings with the fields given (not None) replaced, checked again."""
        return _with_changes(self, changes)
