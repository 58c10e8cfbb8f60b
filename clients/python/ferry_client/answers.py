"""The daemon's answers as small typed objects.

Each answer is the JSON object the daemon sent, as a ``dict`` (``job["ranks"]``, ``json.dumps(job)`` and
``isinstance(job, dict)`` work as they always did), with typed properties for the fields the client documents
(``job.ranks``). A property reads the dict, so the two never disagree; fields a newer daemon adds are in the dict
before they have a property. A sample and a span of an order are plain dicts, typed by :class:`Sample` and
:class:`Span`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict

__all__ = ["Answer", "Checkpoint", "FlushResult", "Job", "ObjectInfo", "Progress", "PutResult", "Sample", "Span",
           "Status"]


class Sample(TypedDict, total=False):
    """One sample of an order (:meth:`FerryClient.order`): a range of an object, pinned to its ETag. ``offset`` and
    ``length`` are None for a whole object; ``index`` is the sample's number in the manifest."""

    index: Optional[int]
    bucket: str
    key: str
    offset: Optional[int]
    length: Optional[int]
    etag: Optional[str]


class Span(TypedDict, total=False):
    """A run of consecutive samples of one object (:meth:`FerryClient.order_spans`): ``offset`` and ``length`` cover
    its samples, each ``[index, offset, length]``."""

    bucket: str
    key: str
    etag: Optional[str]
    offset: Optional[int]
    length: Optional[int]
    samples: List[List[Any]]


class Answer(Dict[str, Any]):
    """A JSON object the daemon answered with, as a dict; the subclasses add typed properties."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


class Job(Answer):
    """The answer to :meth:`FerryClient.register_job`: the job as the daemon runs it."""

    __slots__ = ()

    @property
    def job(self) -> str:
        """The job's name."""
        return str(self["job"])

    @property
    def registration(self) -> str:
        """``"new"`` for the first registration, ``"existing"`` for the same job again, ``"replaced"``."""
        return str(self["registration"])

    @property
    def samples(self) -> int:
        """Samples per epoch, the whole job's."""
        return int(self["samples"])

    @property
    def ranks(self) -> int:
        """The job's ranks (its world size)."""
        return int(self["ranks"])

    @property
    def steps_per_epoch(self) -> int:
        """Steps each rank takes per epoch (every rank steps as often: the plan pads the last)."""
        return int(self["steps_per_epoch"])

    @property
    def canonical_nodes(self) -> int | None:
        """The node plan's canonical node count (None for a job given as ranks); resume on another world with it."""
        value = self.get("canonical_nodes")
        return int(value) if value is not None else None

    @property
    def homes(self) -> dict[str, Any] | None:
        """Where the canonical nodes live (``{"nodes", "node_of"}``), for the node partition."""
        value = self.get("homes")
        return value if isinstance(value, dict) else None

    @property
    def moved_canonical_nodes(self) -> int | None:
        """How many canonical nodes changed node, when the job resumed from a checkpoint."""
        value = self.get("moved_canonical_nodes")
        return int(value) if value is not None else None


class Checkpoint(Answer):
    """What to save to resume a job (:meth:`FerryClient.checkpoint`); pass it back as ``register_job(resume=)``."""

    __slots__ = ()

    @property
    def epoch(self) -> int:
        """The epoch, from 1."""
        return int(self["epoch"])

    @property
    def position(self) -> int:
        """Samples the whole job consumed in the epoch: read on from ``start=position``."""
        return int(self["position"])

    @property
    def canonical_nodes(self) -> int | None:
        """The node plan's canonical node count."""
        value = self.get("canonical_nodes")
        return int(value) if value is not None else None

    @property
    def homes(self) -> dict[str, Any] | None:
        """Where the canonical nodes live, for the node partition."""
        value = self.get("homes")
        return value if isinstance(value, dict) else None


class ObjectInfo(Answer):
    """An object's metadata (:meth:`FerryClient.head`)."""

    __slots__ = ()

    @property
    def size(self) -> int | None:
        """The object's length in bytes."""
        value = self.get("size")
        return int(value) if value is not None else None

    @property
    def etag(self) -> str | None:
        """The ETag, in double quotes as S3 sends it."""
        return self.get("etag")

    @property
    def durability(self) -> str | None:
        """ferry's ``x-ferry-durability``: ``local`` or ``durable`` (None from other servers)."""
        return self.get("durability")

    @property
    def headers(self) -> dict[str, str]:
        """Every response header, names lower-cased."""
        value = self.get("headers")
        return value if isinstance(value, dict) else {}


class PutResult(ObjectInfo):
    """The answer to a write (:meth:`FerryClient.put`): ``etag``, ``durability`` and ``headers``."""

    __slots__ = ()


class Progress(Answer):
    """The answer to a progress report (:meth:`FerryClient.report`)."""

    __slots__ = ()

    @property
    def advice(self) -> list[Any]:
        """The daemon's advisor findings for the job."""
        value = self.get("advice")
        return value if isinstance(value, list) else []


class Status(Answer):
    """The daemon's status (:meth:`FerryClient.status`): the four numbers per job and per tier, with their history."""

    __slots__ = ()

    @property
    def four_numbers(self) -> dict[str, Any]:
        """samples/s, wait per step, local hit rate and egress per epoch, together."""
        value = self.get("four_numbers")
        return value if isinstance(value, dict) else {}

    @property
    def jobs(self) -> list[dict[str, Any]]:
        """One entry per registered job, with its ``epochs`` and ``advice``."""
        value = self.get("jobs")
        return value if isinstance(value, list) else []

    @property
    def tiers(self) -> dict[str, Any]:
        """The local tier, the origin and the peers, each with its counters."""
        value = self.get("tiers")
        return value if isinstance(value, dict) else {}


class FlushResult(Answer):
    """The write-back fence's answer (:meth:`FerryClient.flush`)."""

    __slots__ = ()

    @property
    def complete(self) -> bool:
        """True when every write acknowledged before the fence is in the object store."""
        return bool(self.get("complete"))

    @property
    def first_error(self) -> str | None:
        """Why the store refused a write for good, if it did."""
        return self.get("first_error")

    @property
    def writes(self) -> list[dict[str, Any]]:
        """Each write with its ``bucket``, ``key``, ``size``, ``durability`` and ``error``."""
        value = self.get("writes")
        return value if isinstance(value, list) else []
