"""Reading a job's samples in plan order, and telling the daemon how long the training loop waited.

``Samples`` asks the daemon for a loader worker's order (as spans: runs of a shard's samples), reads each
run in one ranged GET and single objects several at once, on a small thread pool, and yields the samples
in order. ``StepReporter`` measures the wait of each training step and
sends it to the daemon in batches, so the daemon is not asked once per step.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Callable, Protocol, TypeVar, cast

from .answers import Progress, Span
from .client import samples_of
from .decoded import DecodedCache
from .errors import FerryError
from .settings import ReadSettings

__all__ = ["Read", "Samples", "StepReporter", "plan_reads", "reads_ahead"]

log = logging.getLogger("ferry_client")

_T = TypeVar("_T")


class ObjectReader(Protocol):
    """What :class:`Samples` reads with: a :class:`ferry_client.FerryClient`, or anything with its ``get`` and
    ``order_spans``."""

    def get(self, bucket: str, key: str, offset: int | None = None, length: int | None = None,
            etag: str | None = None) -> bytes: ...

    def order_spans(self, job: str, epoch: int, rank: int, worker: int = 0, workers: int = 1,
                    start: int = 0) -> list[Span]: ...


class ProgressSink(Protocol):
    """Where :class:`StepReporter` sends its reports: a :class:`ferry_client.FerryClient`'s ``report``."""

    def report(self, job: str, rank: int, epoch: int, position: int, samples: int, waits_ms: Iterable[float],
               elapsed_s: float | None = None) -> Progress: ...


class Read:
    """One request of a :class:`Samples` iteration: ``length`` bytes of an object from ``offset`` (both None for the
    whole object), pinned to ``etag``, and the positions in the order of the samples it carries."""

    __slots__ = ("bucket", "decoded", "etag", "key", "length", "offset", "positions")

    def __init__(self, bucket: str, key: str, etag: str | None, offset: int | None, length: int | None,
                 positions: list[int], decoded: bool = False) -> None:
        self.bucket, self.key, self.etag = bucket, key, etag
        self.offset, self.length, self.positions = offset, length, positions
        self.decoded = decoded  # one sample, read decoded from the daemon's tier (its bytes when no longer held)

    def cut(self, data: Any, sample: Mapping[str, Any]) -> Any:
        """The bytes of ``sample`` (one of this read's) out of this read's ``data``; a decoded read's as it is."""
        if self.decoded or self.offset is None or sample.get("offset") is None or sample.get("length") is None:
            return data
        at = sample["offset"] - self.offset
        return data[at:at + sample["length"]]

    def __repr__(self) -> str:
        return f"Read({self.bucket}/{self.key} @{self.offset}+{self.length}, positions={self.positions})"


def plan_reads(samples: Sequence[Mapping[str, Any]], window: int = 256, max_gap: int = 1 << 20,
               max_read: int = 64 << 20) -> list[Read]:
    """The requests that read ``samples`` (dicts in order, as :meth:`FerryClient.order` gives them), in the order
    they are first needed.

    The order is cut into windows of at least ``window`` samples, never inside a span (a run of consecutive
    samples of one object): each span is in one window. Within a window the samples of one object (bucket, key,
    ETag) are read together: sorted by offset, neighbours are merged into one ranged GET while the hole between
    them is at most ``max_gap`` bytes and the read at most ``max_read`` bytes (a sample longer than that is read
    alone). So a span of samples that lie together is one request, and so are the spans of one shard that a
    window holds (a plan that shuffles several shards' samples together). A sample without ``offset`` and
    ``length`` is a whole object, read alone. ``window=1`` reads each span (or each piece of it, where holes
    are wider than ``max_gap``) on its own.
    """
    if not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a positive integer, not {window!r}.")
    reads: list[Read] = []
    n = len(samples)
    begin = 0
    while begin < n:
        end = begin
        while end < n and (end - begin < window or _same_object(samples[end - 1], samples[end])):
            end += 1
        groups: dict[tuple[str, str, str | None], list[int]] = {}
        for pos in range(begin, end):
            sample = samples[pos]
            if sample.get("offset") is None or sample.get("length") is None:
                reads.append(Read(sample["bucket"], sample["key"], sample.get("etag"), None, None, [pos]))
                continue
            groups.setdefault((sample["bucket"], sample["key"], sample.get("etag")), []).append(pos)
        for (bucket, key, etag), positions in groups.items():
            positions.sort(key=lambda p: (samples[p]["offset"], p))
            current: Read | None = None
            for pos in positions:
                offset, length = samples[pos]["offset"], samples[pos]["length"]
                if current is not None and current.offset is not None and current.length is not None:
                    stop = current.offset + current.length
                    if offset - stop <= max_gap and max(stop, offset + length) - current.offset <= max_read:
                        current.length = max(stop, offset + length) - current.offset
                        current.positions.append(pos)
                        continue
                current = Read(bucket, key, etag, offset, length, [pos])
                reads.append(current)
        begin = end
    for read in reads:
        read.positions.sort()
    reads.sort(key=lambda r: r.positions[0])
    return reads


def reads_ahead(fetch_s: float | None, busy_s: float | None, prefetch: int) -> int:
    """How many reads :class:`Samples` keeps submitted, the one being consumed included (Little's law): enough
    that reads taking ``fetch_s`` seconds each come back, twice over, as fast as a consumer spending ``busy_s`` on
    each uses them. At least 2 (one read ahead, whatever a coarse clock measured), at most ``prefetch``;
    ``prefetch`` until both are measured.

    Cold, a read waits on the store and many are needed ahead; warm, a read from the daemon's tier comes back
    in a fraction of the time its samples take to decode, and reads ahead beyond that only hold memory and
    threads: 8 ahead ran 0.7-0.8x as fast as 2 on 10 MB shards through a warm daemon (BENCHMARKS.md).
    """
    if fetch_s is None or busy_s is None:
        return prefetch
    return min(prefetch, max(2, math.ceil(2 * fetch_s / max(busy_s, 1e-6)) + 1))


def _same_object(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (a["bucket"], a["key"], a.get("etag")) == (b["bucket"], b["key"], b.get("etag"))


class Samples:
    """The bytes of a loader worker's samples for one epoch, in plan order.

    Epochs count from 1, as the daemon's do. The order comes from the daemon as spans
    (``client.order_spans(job, epoch, rank, worker, workers, start)``) when iteration starts, or from ``plan``
    (a list of sample dicts with ``bucket``, ``key`` and optionally ``offset``, ``length``, ``etag``) when given.

    How it reads is a :class:`ferry_client.ReadSettings` (``settings=``, or its fields one keyword at a time: a
    keyword given replaces that field). The samples are read in few requests (:func:`plan_reads`): the samples of
    one object that a window of ``window`` samples holds, a run of a shard's samples above all, come in one ranged
    GET, cut here. Up to ``prefetch`` reads are ahead of the consumer (in flight or read and not yet consumed), on
    ``threads`` threads (default ``min(prefetch, 8)``), each thread keeping its connection to the daemon alive;
    reads ahead hold at most ``ahead_bytes`` (the read needed now is always made). How many of the ``prefetch`` are
    used follows what is measured while iterating (:func:`reads_ahead`): as many as the reads' time over the
    consumer's time per read asks, so all of them while reads wait on the store, few once they come from the
    daemon's tier. Single-object samples are thus fetched up to ``prefetch`` at a time. Each read names its
    ETag, so a changed object fails instead of mixing versions. With ``meta=True`` it yields ``(sample, data)``
    pairs. A read that fails raises its FerryError where its first sample would have been yielded.

    With ``decoded`` (a :class:`ferry_client.DecodedCache`), the samples the daemon holds decoded are read so, one
    request each, instead of their encoded bytes: their data is a :class:`ferry_client.decoded.Decoded` (or the
    encoded bytes when the daemon no longer holds it), and the encoded reads' CPU and time are told to it.
    """

    def __init__(self, client: ObjectReader, job: str | None = None, epoch: int = 1, rank: int = 0, worker: int = 0,
                 workers: int = 1, start: int = 0, prefetch: int | None = None, threads: int | None = None,
                 plan: Iterable[Mapping[str, Any]] | None = None, meta: bool = False, window: int | None = None,
                 max_gap: int | None = None, max_read: int | None = None, ahead_bytes: int | None = None, *,
                 settings: ReadSettings | None = None, decoded: DecodedCache | None = None) -> None:
        if plan is None and job is None:
            raise ValueError("Samples needs a job (to ask the daemon for its order) or an explicit plan.")
        self.settings = (settings or ReadSettings()).with_changes(
            prefetch=prefetch, threads=threads, window=window, max_gap=max_gap, max_read=max_read,
            ahead_bytes=ahead_bytes)
        self.client = client
        self.job = job
        self.epoch = epoch
        self.rank = rank
        self.worker = worker
        self.workers = workers
        self.start = start
        self.meta = meta
        self._plan: list[Mapping[str, Any]] | None = list(plan) if plan is not None else None
        self._reads: list[Read] | None = None
        self._fetch_s: float | None = None  # a read's time, a moving average over the reads made (see reads_ahead)
        self.decoded = decoded

    @property
    def prefetch(self) -> int:
        """Reads ahead of the consumer, at most (``settings.prefetch``)."""
        return self.settings.prefetch

    @property
    def threads(self) -> int:
        """The threads reads are made on."""
        return self.settings.reading_threads

    @property
    def window(self) -> int:
        return self.settings.window

    @property
    def max_gap(self) -> int:
        return self.settings.max_gap

    @property
    def max_read(self) -> int:
        return self.settings.max_read

    @property
    def ahead_bytes(self) -> int:
        return self.settings.ahead_bytes

    @property
    def plan(self) -> list[Mapping[str, Any]]:
        """The sample dicts this iterator reads, in order (asked of the daemon on first use)."""
        if self._plan is None:
            assert self.job is not None  # checked when made: a job or a plan
            spans = self.client.order_spans(self.job, self.epoch, self.rank, self.worker, self.workers, self.start)
            self._plan = cast("list[Mapping[str, Any]]", samples_of(spans))
        return self._plan

    @property
    def reads(self) -> list[Read]:
        """The requests an iteration makes (:func:`plan_reads` of the plan), in the order they are needed."""
        if self._reads is None:
            plan = self.plan
            if self.decoded is None:
                self._reads = plan_reads(plan, self.window, self.max_gap, self.max_read)
            else:
                held = self.decoded.held(plan)
                encoded = [pos for pos, h in enumerate(held) if not h]
                reads = plan_reads([plan[pos] for pos in encoded], self.window, self.max_gap, self.max_read)
                for read in reads:
                    read.positions = [encoded[p] for p in read.positions]
                for pos, h in enumerate(held):
                    if h:
                        s = plan[pos]
                        reads.append(Read(s["bucket"], s["key"], s.get("etag"), s.get("offset"), s.get("length"), [pos],
                                          decoded=True))
                reads.sort(key=lambda r: r.positions[0])
                self._reads = reads
        return self._reads

    def __len__(self) -> int:
        return len(self.plan)

    def _fetch(self, read: Read) -> Any:
        if read.decoded and self.decoded is not None:
            start = time.perf_counter()
            held = self.decoded.read(self.plan[read.positions[0]])
            if held is not None:
                # timed as every read is: without it, an epoch of decoded reads only would keep all prefetch reads
                # ahead, their threads contending for the worker's core to no gain
                self._time_read(time.perf_counter() - start)
                return held
        start = time.perf_counter()
        cpu = time.thread_time()
        data = self.client.get(read.bucket, read.key, read.offset, read.length, read.etag)
        took = time.perf_counter() - start
        self._time_read(took)
        if self.decoded is not None:
            self.decoded.encoded(len(read.positions), time.thread_time() - cpu, len(data), took, self.threads)
        return data

    def _time_read(self, took: float) -> None:
        self._fetch_s = took if self._fetch_s is None else 0.7 * self._fetch_s + 0.3 * took

    def __iter__(self) -> Iterator[Any]:  # bytes; (sample, bytes) with meta=True
        plan = self.plan
        reads = self.reads
        read_of = [0] * len(plan)
        for r, read in enumerate(reads):
            for pos in read.positions:
                read_of[pos] = r
        left = [len(read.positions) for read in reads]
        pool = concurrent.futures.ThreadPoolExecutor(self.threads, thread_name_prefix="ferry-read")
        held: dict[int, concurrent.futures.Future[bytes]] = {}  # read -> future, from submission until its last sample is yielded
        held_bytes = 0
        following = 0  # the next read to submit: reads are submitted in the order they are needed
        # the consumer's time per read (a moving average): the time between two reads' last samples, less the
        # time spent waiting for reads in it
        busy_s: float | None = None
        mark = time.perf_counter()
        waited = 0.0
        ahead = self.prefetch

        try:
            for pos, sample in enumerate(plan):
                r = read_of[pos]
                while following < len(reads) and (following <= r or (
                        len(held) < ahead
                        and held_bytes + (reads[following].length or 0) <= self.ahead_bytes)):
                    held[following] = pool.submit(self._fetch, reads[following])
                    held_bytes += reads[following].length or 0
                    following += 1
                future = held[r]
                if not future.done():
                    wait_start = time.perf_counter()
                    future.result()
                    waited += time.perf_counter() - wait_start
                data = reads[r].cut(future.result(), sample)
                left[r] -= 1
                if not left[r]:
                    del held[r]
                    held_bytes -= reads[r].length or 0
                    now = time.perf_counter()
                    busy = max(0.0, now - mark - waited)
                    busy_s = busy if busy_s is None else 0.7 * busy_s + 0.3 * busy
                    mark, waited = now, 0.0
                    ahead = reads_ahead(self._fetch_s, busy_s, self.prefetch)
                yield (sample, data) if self.meta else data
        finally:
            for future in held.values():
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)


class _Step:
    """One measured wait: ``with reporter.wait() as step: batch = next(it)``.

    Inside the block, set ``step.samples`` when the batch is not ``batch_size`` long (the last one),
    or ``step.position`` to report the job's position yourself. A block that raises (StopIteration at
    the end of the epoch) is not counted.
    """

    def __init__(self, reporter: StepReporter) -> None:
        self._reporter = reporter
        self.samples: int | None = None
        self.position: int | None = None
        self._t0 = 0.0

    def __enter__(self) -> _Step:
        self._reporter._begin()
        self._t0 = self._reporter._clock()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            waited_ms = (self._reporter._clock() - self._t0) * 1000.0
            self._reporter.step(waited_ms, self.samples, self.position)


class StepReporter:
    """Measures the training loop's wait for each step and reports it to the daemon in batches.

    ::

        with StepReporter(client, "resnet", rank, epoch=1, batch_size=32, ranks=8) as reporter:
            for batch in reporter.timed(loader):
                train(batch)

    or, where the loop must stay as it is::

        reporter = StepReporter(client, "resnet", rank, epoch=1, batch_size=32, ranks=8)
        it = iter(loader)
        while True:
            try:
                with reporter.wait() as step:
                    batch = next(it)
            except StopIteration:
                break
            train(batch)
        reporter.close()

    A report goes out when ``interval_s`` (0.5 s) has passed since the last one or ``max_steps`` (64)
    steps are pending, at ``set_epoch`` and at ``close``. Each report carries this consumer's waits,
    the samples it consumed since the last one, the time it covers by this consumer's clock (from the
    epoch's start here, then from the last report: the daemon's samples/s and wait share are the
    consumer's own, never more than 100% of its time), and the job's ``position``: the samples the whole job
    has consumed this epoch. Unless a step says otherwise (``step.position``), the reporter takes it as
    ``start + ranks * (samples this rank consumed)``, which holds when the ranks step together, as
    data-parallel training does. Each step counts ``batch_size`` samples unless ``step.samples`` says.

    Reports are best effort while training runs: a failed one is logged, its waits go with the next,
    and the next is tried only after a back-off (doubling, up to 30 s), so a daemon that is down costs
    the loop one failed request now and then, not one per step. ``flush()`` and ``close()`` raise the
    FerryError of a report that fails.

    Each answer carries the daemon's advisor findings for the job (CPU-bound preprocessing, a tier too
    small for the working set, waits on the object store, the partition, projected egress); ``advice``
    holds the latest, so after ``set_epoch`` or ``close`` it covers the epoch just ended.
    """

    MAX_PENDING_WAITS = 4096  # kept while the daemon cannot be reached; older waits are dropped

    def __init__(self, client: ProgressSink, job: str, rank: int, epoch: int = 1, batch_size: int = 1, ranks: int = 1,
                 start: int = 0, interval_s: float = 0.5, max_steps: int = 64,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}.")
        if not isinstance(ranks, int) or ranks < 1:
            raise ValueError(f"ranks must be a positive integer, not {ranks!r}.")
        self.client = client
        self.job = job
        self.rank = rank
        self.batch_size = batch_size
        self.ranks = ranks
        self.interval_s = interval_s
        self.max_steps = max_steps
        self._clock = clock
        self._lock = threading.Lock()
        self.reports_sent = 0
        self.reports_failed = 0
        self.last_error: FerryError | None = None
        self._failures_in_row = 0
        self._retry_at = float("-inf")  # after a failed report, the next waits (backing off up to 30 s)
        self.advice: list[Any] = []  # the daemon's findings for the job, as of the last report it answered
        self._start_epoch(epoch, start)

    def _start_epoch(self, epoch: int, start: int) -> None:
        self.epoch = epoch
        self.start = start
        self.steps = 0          # steps this epoch
        self.samples = 0        # samples this rank consumed this epoch
        self.position = start   # the job's position, as last reported or computed
        self._waits: list[float] = []  # waits (ms) not yet reported
        self._unreported = 0    # samples not yet reported
        self._last_sent = self._clock()
        self._covered_from = self._last_sent  # the start of the time the next report covers, by this clock
        self._announced = epoch == 1 and start == 0  # registering the job began its epoch 1
        self._begun = False  # the consumer has asked for the epoch's first batch

    def wait(self) -> _Step:
        """A context manager that measures one step's wait (see the class example)."""
        return _Step(self)

    def timed(self, batches: Iterable[_T], count: Callable[[_T], int] | None = None) -> Iterator[_T]:
        """Yields the items of ``batches`` (a DataLoader, say), recording the wait for each as a step.

        ``count(batch)`` gives a batch's number of samples (default: ``batch_size``; pass ``count=len``
        when batches are sequences of samples, so the last, shorter one counts right).
        """
        self._begin()
        it = iter(batches)
        while True:
            started = self._clock()
            try:
                batch = next(it)
            except StopIteration:
                return
            self.step((self._clock() - started) * 1000.0, count(batch) if count is not None else None)
            yield batch

    def step(self, wait_ms: float, samples: int | None = None, position: int | None = None) -> None:
        """Records a step whose batch took ``wait_ms`` to arrive; sends a report when one is due."""
        samples = self.batch_size if samples is None else samples
        with self._lock:
            self.steps += 1
            self.samples += samples
            self._unreported += samples
            self.position = position if position is not None else self.start + self.ranks * self.samples
            self._waits.append(float(wait_ms))
            if len(self._waits) > self.MAX_PENDING_WAITS:
                del self._waits[: len(self._waits) - self.MAX_PENDING_WAITS]
            now = self._clock()
            due = now >= self._retry_at and (len(self._waits) >= self.max_steps
                                             or now - self._last_sent >= self.interval_s)
        if due:
            self._send(strict=False)

    def pending(self) -> dict[str, Any] | None:
        """The report that would be sent now, as a dict (None when nothing is pending)."""
        with self._lock:
            return self._pending()

    def _pending(self, now: float | None = None) -> dict[str, Any] | None:
        if not self._waits and not self._unreported:
            return None
        now = self._clock() if now is None else now
        return {"rank": self.rank, "epoch": self.epoch, "position": self.position,
                "samples": self._unreported, "waits_ms": list(self._waits),
                "elapsed_s": max(0.0, now - self._covered_from)}

    def _send(self, strict: bool) -> None:
        with self._lock:
            now = self._clock()
            report = self._pending(now)
            self._last_sent = now
            if report is None:
                return
            sent_waits = len(report["waits_ms"])
        try:
            answer = self.client.report(self.job, report["rank"], report["epoch"], report["position"],
                                        report["samples"], report["waits_ms"], elapsed_s=report["elapsed_s"])
        except FerryError as e:  # FerryConnectionError included
            self._failed(e)
            if strict:
                raise
            log.warning("ferry: progress report failed, its waits go with the next one: %s", e)
            return
        with self._lock:
            # Steps recorded while the report was on its way stay pending.
            del self._waits[:sent_waits]
            self._unreported -= report["samples"]
            self._covered_from = now  # the next report covers the time from this one on
            self.reports_sent += 1
            if isinstance(answer, dict) and isinstance(answer.get("advice"), list):
                self.advice = answer["advice"]
            self._failures_in_row = 0
            self._retry_at = float("-inf")

    def flush(self) -> None:
        """Sends what is pending now; raises FerryError if the daemon refuses it or cannot be reached."""
        self._send(strict=True)

    def set_epoch(self, epoch: int, start: int = 0) -> None:
        """Sends what is pending for the current epoch, then counts ``epoch`` from ``start`` (and tells the daemon)."""
        self.flush()
        with self._lock:
            self._start_epoch(epoch, start)

    def _begin(self) -> None:
        """The consumer asks for its epoch's first batch: the epoch's time by this clock starts here (not when the
        reporter was made: imports and set-up are not the loader's), and the daemon is told the epoch has begun, so
        that the reads that come first are charged to it (not for epoch 1 from its start: registering began it).
        Once per epoch, by ``timed`` and ``wait``."""
        with self._lock:
            if self._begun:
                return
            self._begun = True
            if self.steps == 0:
                self._covered_from = self._last_sent = self._clock()
            if self._announced:
                return
            self._announced = True
            if self._clock() < self._retry_at:
                return  # the daemon failed a report a moment ago: the epoch's first report tells it instead
            epoch, position = self.epoch, self.position
        try:
            self.client.report(self.job, self.rank, epoch, position, 0, [], elapsed_s=0.0)
        except FerryError as e:
            self._failed(e)
            log.warning("ferry: could not tell the daemon epoch %d began (its steps will): %s", epoch, e)
            return
        self.reports_sent += 1

    def _failed(self, error: FerryError) -> None:
        """A report (or an announce) failed: counted, and the next waits a back-off (doubling, up to 30 s)."""
        self.reports_failed += 1
        self.last_error = error
        self._failures_in_row += 1
        self._retry_at = self._clock() + min(30.0, self.interval_s * 2 ** self._failures_in_row)

    def close(self) -> None:
        """Sends the last report; raises FerryError if it fails."""
        self.flush()

    def __enter__(self) -> StepReporter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:  # do not hide the loop's own error behind a report's
            try:
                self._send(strict=False)
            except Exception:  # pragma: no cover - best effort only
                pass
