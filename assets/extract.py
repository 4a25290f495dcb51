"""Run one endpoint spec: pages -> normalise -> batch parts -> commit, with the quarantine rule.

Kept free of Dagster so the benchmark and tests can call it directly; `pipelines.lake_assets` wraps it (through `assets.changes.land_full`).
Memory stays bounded: pages are normalised one at a time and each table's writer flushes every
`flush_rows` rows.

Decoding a page's JSON and normalising it is most of an extraction's CPU, and in this process it
competes for the GIL with the event loop that keeps the requests in flight. Once a spec has
received more than `WORKER_MIN_BYTES` of undecoded JSON, its pages go to the worker pool instead
(`assets.workers`, `ExtractSettings.normalise_workers`): an undecoded `LazyRecords` page pickles
as its bytes, the worker decodes and normalises it and sends back the Arrow tables. Results are
applied in page order, at most `INFLIGHT_PER_WORKER` pages per worker in flight, so the lake gets
the same rows in the same order and files as in-thread normalisation.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from assets import progress, workers
from assets.normalise import Normaliser
from assets.pages import PageStream, requests_used
from assets.specs import EndpointSpec, FanOut
from assets.workers import (
    NormaliseWorkerDied,
    NormaliseWorkerError,
    PageResult,
    normalise_page,
    worker_count,
)
from lake.parts import DEFAULT_FLUSH_ROWS, PartWriter
from lake.store import Lake
from service.lazy import LazyRecords

log = logging.getLogger("assets.extract")
DEFAULT_THRESHOLD = 0.05
# A spec's pages go to the worker pool once it has received this much undecoded JSON: about the
# CPU (~1.5 s to decode and normalise reservation details) that starting the workers costs. A
# small-scale run (~20 MB of reservation details) stays in the thread; a medium one (~640 MB)
# moves to the pool after its first ~50 pages. Pages that arrive decoded (lists) never count.
WORKER_MIN_BYTES = 32 * 2**20
INFLIGHT_PER_WORKER = 2  # pages sent to the pool and not yet applied, per worker

Record = dict[str, Any]
Pages = Iterable[tuple[Sequence[Record], datetime]]
__all__ = [
    "ExtractReport",
    "ExtractSettings",
    "NormaliseWorkerDied",
    "NormaliseWorkerError",
    "QuarantineRateExceeded",
    "normalise_page",
    "run_spec",
    "worker_count",
]


class QuarantineRateExceeded(Exception):
    """Too many bad records in one table: the batch is not committed (quarantine is kept)."""


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
    n_workers = worker_count(settings.normalise_workers) if workers.registered(spec) else 0
    job = workers.Job(spec.name, batch_id, spec.batch_kind, settings.include_pii)
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
            workers.discard_pool(pool)
            raise NormaliseWorkerDied(workers.died_message(spec.table.name, exc)) from exc
        apply(done)

    try:
        for page, extracted_at in pages:
            if isinstance(page, LazyRecords):
                received += page.nbytes
            if pool is None and n_workers and received > WORKER_MIN_BYTES:
                pool = workers.shared_pool(n_workers)
                report.normalise_workers = n_workers
            if pool is None:
                apply(normalise_page(spec, normaliser, page, extracted_at))
                continue
            try:
                inflight.append(pool.submit(workers.normalise_in_worker, job, page, extracted_at))
            except BrokenProcessPool as exc:
                workers.discard_pool(pool)
                raise NormaliseWorkerDied(workers.died_message(spec.table.name, exc)) from exc
            while len(inflight) >= INFLIGHT_PER_WORKER * n_workers:
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
