"""Run one endpoint spec: pages -> normalise -> batch parts -> commit, with the quarantine rule.

Kept free of Dagster so the benchmark and tests can call it directly; `assets.factory` wraps it.
Memory stays bounded: pages are normalised one at a time and each table's writer flushes every
`flush_rows` rows.

Decoding a page's JSON and normalising it is most of an extraction's CPU, and in this process it
competes for the GIL with the event loop that keeps the requests in flight. Once a spec has
received more than `WORKER_MIN_BYTES` of undecoded JSON, its pages go to a process pool instead
(`ExtractSettings.normalise_workers`): an undecoded `LazyRecords` page pickles as its bytes, the
worker decodes and normalises it and sends back the Arrow tables. Results are applied in page
order, at most `INFLIGHT_PER_WORKER` pages per worker in flight, so the lake gets the same rows in
the same order and files as in-thread normalisation. The pool is one per process, started on
first need and reused by later specs and runs. Workers start by "forkserver" (never fork: the
page stream's event loop thread is running), which imports the main module in each worker: a
script that calls `run_spec` must do so under `if __name__ == "__main__":`.
"""

from __future__ import annotations

import atexit
import functools
import logging
import multiprocessing
import os
import pickle
import select
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, NamedTuple

from assets import progress
from assets.lake import DEFAULT_FLUSH_ROWS, Lake, PartWriter
from assets.normalise import Normalised, Normaliser
from assets.pages import PageStream, requests_used
from assets.specs import SPECS, EndpointSpec, FanOut
from service.lazy import LazyRecords

log = logging.getLogger("assets.extract")
DEFAULT_THRESHOLD = 0.05
# A spec's pages go to the worker pool once it has received this much undecoded JSON: about the
# CPU (~1.5 s to decode and normalise reservation details) that starting the workers costs. A
# small-scale run (~20 MB of reservation details) stays in the thread; a medium one (~640 MB)
# moves to the pool after its first ~50 pages. Pages that arrive decoded (lists) never count.
WORKER_MIN_BYTES = 32 * 2**20
MAX_AUTO_WORKERS = 4
INFLIGHT_PER_WORKER = 2  # pages sent to the pool and not yet applied, per worker
START_METHOD = "forkserver"  # never fork: the page stream's event loop thread is running
PARENT_POLL_SECONDS = 2.0  # a worker checks this often whether the run's process still lives

Record = dict[str, Any]
Pages = Iterable[tuple[Sequence[Record], datetime]]


class QuarantineRateExceeded(Exception):
    """Too many bad records in one table: the batch is not committed (quarantine is kept)."""


class NormaliseWorkerDied(RuntimeError):
    """A normaliser worker process ended abruptly; the table's batch was not committed."""


class NormaliseWorkerError(RuntimeError):
    """An error in a normaliser worker that could not be sent back as itself (not picklable)."""


@dataclass(frozen=True)
class ExtractSettings:
    include_pii: bool = False
    flush_rows: int = DEFAULT_FLUSH_ROWS
    quarantine_threshold: float = DEFAULT_THRESHOLD
    today: date | None = None
    horizon_days: int = 90
    # Worker processes that decode and normalise pages of big specs: None = automatic (one per
    # core on 2 or more cores, at most MAX_AUTO_WORKERS), 0 = always in the asset's thread.
    normalise_workers: int | None = None


def worker_count(setting: int | None) -> int:
    """Worker processes for a `normalise_workers` setting (None = one per core, see below)."""
    if setting is None:
        try:
            cores = len(os.sched_getaffinity(0))  # the cores this process may run on
        except AttributeError:  # pragma: no cover - not on Linux
            cores = os.cpu_count() or 1
        # One per core: the process that fetches needs well under a core once it no longer
        # decodes (measured at medium scale on 2 vCPUs: 2 workers 14.5-15.1 s, 1 worker
        # 21.0-21.8 s, none 18.7-27.0 s); with a single core a worker only adds transfers.
        return 0 if cores < 2 else min(MAX_AUTO_WORKERS, cores)
    if setting < 0:
        raise ValueError(
            f"normalise_workers must be 0 or more (or None = automatic), got {setting}"
        )
    return setting


@dataclass
class TableReport:
    rows: int = 0
    bytes_written: int = 0
    files: list[str] = field(default_factory=list)
    unknown_fields: dict[str, int] = field(default_factory=dict)


@dataclass
class ExtractReport:
    """What a run of one spec did, for Dagster metadata and logs."""

    batch_id: str
    batch_kind: str
    records: int = 0
    quarantined: int = 0
    requests: int = 0
    calls: int = 0
    tables: dict[str, TableReport] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    dropped_pii_fields: dict[str, int] = field(default_factory=dict)
    quarantine_files: list[str] = field(default_factory=list)
    cursor: Any = None
    normalise_workers: int = 0  # worker processes that normalised its pages (0: this process)

    @property
    def quarantine_rate(self) -> float:
        return self.quarantined / self.records if self.records else 0.0


def plan_calls(spec: EndpointSpec, lake: Lake, settings: ExtractSettings) -> list[dict[str, Any]]:
    """Keyword arguments of each facade call (one call unless the spec fans out)."""
    if spec.fan_out is None:
        return [dict(spec.kwargs)]
    ctx = FanOut(
        lake=lake, today=settings.today or date.today(), horizon_days=settings.horizon_days
    )
    return [{**spec.kwargs, **kw} for kw in spec.fan_out(ctx)]


def run_spec(
    spec: EndpointSpec,
    *,
    lake: Lake,
    batch_id: str,
    settings: ExtractSettings,
    open_client: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
    pages: Pages | None = None,
) -> ExtractReport:
    """Extract one spec into the lake: from the service (`open_client`) or given `pages`."""
    stream: PageStream | None = None
    calls: list[dict[str, Any]] = []
    if pages is None:
        if open_client is None:
            raise ValueError("run_spec needs open_client or pages")
        calls = plan_calls(spec, lake, settings)
        stream = PageStream(open_client, spec.method, calls)
        pages = stream
    report = ExtractReport(batch_id, spec.batch_kind, calls=len(calls))
    normaliser = Normaliser(
        spec, batch_id=batch_id, batch_kind=spec.batch_kind, include_pii=settings.include_pii
    )
    writers = {
        t.name: lake.writer(
            t, batch_id, include_pii=settings.include_pii, flush_rows=settings.flush_rows
        )
        for t in spec.tables
    }
    quarantine = lake.quarantine_writer(spec.table.name, batch_id, settings.flush_rows)
    unknown: dict[str, Counter[str]] = {t.name: Counter() for t in spec.tables}
    reasons: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    cursor: Any = None
    # Specs the workers can look up by name (they hold callables, so they do not pickle).
    workers = (
        worker_count(settings.normalise_workers) if _SPECS_BY_NAME.get(spec.name) is spec else 0
    )
    job = _Job(spec.name, batch_id, spec.batch_kind, settings.include_pii)
    pool: ProcessPoolExecutor | None = None
    inflight: deque[Future[PageResult]] = deque()
    received = 0  # bytes of undecoded JSON so far

    def apply(done: PageResult) -> None:
        nonlocal cursor
        top, result = done
        if top is not None:
            cursor = top if cursor is None or top > cursor else cursor
        if result is None:
            return
        report.records += result.records
        report.quarantined += result.quarantined
        reasons.update(result.reasons)
        dropped.update(result.dropped_pii_fields)
        for key, n in result.unknown_fields.items():
            unknown[key.split(".", 1)[0]][key.split(".", 1)[1]] += n
        for name, table in result.tables.items():
            writers[name].add(table)
        quarantine.add(result.quarantine)
        progress.report(spec.table.name, result.records, result.quarantined)

    def apply_oldest() -> None:
        try:
            done = inflight.popleft().result()
        except BrokenProcessPool as exc:
            _discard_pool(pool)
            raise NormaliseWorkerDied(_died_message(spec, exc)) from exc
        apply(done)

    try:
        for page, extracted_at in pages:
            if isinstance(page, LazyRecords):
                received += page.nbytes
            if pool is None and workers and received > WORKER_MIN_BYTES:
                pool = _shared_pool(workers)
                report.normalise_workers = workers
            if pool is None:
                apply(normalise_page(spec, normaliser, page, extracted_at))
                continue
            try:
                inflight.append(pool.submit(_normalise_in_worker, job, page, extracted_at))
            except BrokenProcessPool as exc:
                _discard_pool(pool)
                raise NormaliseWorkerDied(_died_message(spec, exc)) from exc
            while len(inflight) >= INFLIGHT_PER_WORKER * workers:
                apply_oldest()
        while inflight:
            apply_oldest()
    except BaseException:
        for pending in inflight:
            pending.cancel()
        for w in writers.values():
            w.abort()
        quarantine.commit()  # what was found bad so far is evidence worth keeping
        raise
    finally:
        if stream is not None:
            report.requests = requests_used(stream.stats)
    report.reasons = dict(reasons.most_common())
    report.dropped_pii_fields = dict(dropped)
    report.quarantine_files = [p.name for p in quarantine.commit()]
    if report.quarantine_rate > settings.quarantine_threshold:
        for w in writers.values():
            w.abort()
        raise QuarantineRateExceeded(_threshold_message(spec, report, settings, lake))
    # A full batch missing quarantined records would make the current-state rule drop those
    # keys; landing it as a delta keeps their last good version instead.
    if report.quarantined and report.batch_kind == "full":
        report.batch_kind = "delta"
    kind_override = report.batch_kind if report.batch_kind != spec.batch_kind else None
    _commit(writers, spec, kind_override, report, unknown)
    if spec.cursor_field is not None and cursor is not None:
        lake.write_state(f"cursor_{spec.name}", batch_id, {"cursor": cursor})
        report.cursor = cursor
    progress.report(spec.table.name, 0, 0, done=True)
    return report


class PageResult(NamedTuple):
    """One page as the asset thread applies it: the page's cursor candidate (the largest
    integer `cursor_field`, before `record_filter`) and its normalised tables (None when the
    filter left no record)."""

    cursor: int | None
    normalised: Normalised | None


def normalise_page(
    spec: EndpointSpec, normaliser: Normaliser, page: Sequence[Record], extracted_at: datetime
) -> PageResult:
    """Decode (a `LazyRecords` page), take the cursor candidate, filter and normalise one page."""
    records = page.records() if isinstance(page, LazyRecords) else page
    if not isinstance(records, list):
        records = list(records)
    top: int | None = None
    if spec.cursor_field is not None:
        seen = [r.get(spec.cursor_field) for r in records]
        top = max((v for v in seen if isinstance(v, int)), default=None)
    if spec.record_filter is not None:
        records = [r for r in records if spec.record_filter(r)]
    if not records:
        return PageResult(top, None)
    return PageResult(top, normaliser.normalise(records, extracted_at))


# --- the worker pool ----------------------------------------------------------------------------

_SPECS_BY_NAME: dict[str, EndpointSpec] = {s.name: s for s in SPECS}


class _Job(NamedTuple):
    """What a worker needs besides the page to normalise it as `run_spec` would."""

    spec: str
    batch_id: str
    batch_kind: str
    include_pii: bool


@functools.lru_cache(maxsize=16)
def _worker_normaliser(job: _Job) -> Normaliser:
    return Normaliser(
        _SPECS_BY_NAME[job.spec],
        batch_id=job.batch_id,
        batch_kind=job.batch_kind,
        include_pii=job.include_pii,
    )


def _normalise_in_worker(job: _Job, page: Sequence[Record], extracted_at: datetime) -> PageResult:
    """Runs in a worker process: the page arrives undecoded (`LazyRecords`) and is decoded here."""
    try:
        return normalise_page(_SPECS_BY_NAME[job.spec], _worker_normaliser(job), page, extracted_at)
    except Exception as exc:
        try:  # the error travels back pickled; one that cannot would break the whole pool
            pickle.loads(pickle.dumps(exc))
        except Exception:
            detail = "".join(traceback.format_exception(exc)).rstrip()
            raise NormaliseWorkerError(
                f"{type(exc).__name__}: {exc} (in a normaliser worker)\n{detail}"
            ) from None
        raise


_pool_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_pool_size = 0
_exit_hook = False


def _shared_pool(workers: int) -> ProcessPoolExecutor:
    """This process's worker pool (created on first need, replaced when the size changes)."""
    global _pool, _pool_size, _exit_hook
    with _pool_lock:
        if _pool is None or _pool_size != workers:
            if _pool is not None:
                _pool.shutdown(wait=False)  # work already submitted still completes
            if not _exit_hook:
                atexit.register(_shutdown_pool)
                _exit_hook = True
            _pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context(START_METHOD),
                initializer=_follow_parent,
                initargs=(os.getpid(),),
            )
            _pool_size = workers
            log.info("normalising pages in %d worker process(es)", workers)
        return _pool


def _follow_parent(pid: int) -> None:
    """Worker start-up: exit when the run's process `pid` ends, however it ends.

    A pool's workers wait for work on a pipe they also hold open, so a run killed with SIGKILL
    (or by the OOM killer) would leave them, and the forkserver, idle forever. A daemon thread
    waits on a pidfd of the run's process (polls where pidfds are missing) and ends the worker.
    """
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # pragma: no cover - not Linux >= 5.3
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])
        else:  # pragma: no cover - not Linux >= 5.3
            while True:
                time.sleep(PARENT_POLL_SECONDS)
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
        os._exit(0)

    threading.Thread(target=watch, name="follow-run-process", daemon=True).start()


def _discard_pool(pool: ProcessPoolExecutor | None) -> None:
    """Forget a broken pool so the next spec or run starts a new one."""
    global _pool, _pool_size
    with _pool_lock:
        if pool is not None and pool is _pool:
            _pool, _pool_size = None, 0
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def _shutdown_pool() -> None:
    global _pool, _pool_size
    with _pool_lock:
        pool, _pool, _pool_size = _pool, None, 0
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def _died_message(spec: EndpointSpec, exc: BaseException) -> str:
    return (
        f"table {spec.table.name!r}: a normaliser worker process ended abruptly while "
        f"normalising pages ({exc}; killed, out of memory or crashed); nothing of this table was "
        "committed in this run (records quarantined so far are kept). The next run starts new "
        "workers; set normalise_workers=0 to normalise in the asset's own process."
    )


def _commit(
    writers: dict[str, PartWriter],
    spec: EndpointSpec,
    kind: str | None,
    report: ExtractReport,
    unknown: dict[str, Counter[str]],
) -> None:
    # Children first: until the parent commits, the new children are not yet current, so a
    # reader never sees a new parent with its old children.
    for table in reversed(spec.tables):
        w = writers[table.name]
        files = w.commit(kind)
        report.tables[table.name] = TableReport(
            rows=w.rows,
            bytes_written=w.bytes_written,
            files=[p.name for p in files],
            unknown_fields=dict(unknown[table.name].most_common()),
        )


def _threshold_message(
    spec: EndpointSpec, report: ExtractReport, settings: ExtractSettings, lake: Lake
) -> str:
    top = "; ".join(f"{reason} x{n}" for reason, n in list(report.reasons.items())[:5])
    return (
        f"table {spec.table.name!r}: {report.quarantined} of {report.records} records "
        f"({report.quarantine_rate:.1%}) failed validation, above the quarantine threshold of "
        f"{settings.quarantine_threshold:.1%}; nothing was committed for this table. "
        f"Most common reasons: {top}. "
        f"Bad records with reasons: {lake.quarantine_dir(spec.table.name)}"
    )
