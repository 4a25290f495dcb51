"""Run one endpoint spec: pages -> normalise -> batch parts -> commit, with the quarantine rule.

Kept free of Dagster so the benchmark and tests can call it directly; `assets.factory` wraps it.
Memory stays bounded: pages are normalised one at a time and each table's writer flushes every
`flush_rows` rows.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from assets import progress
from assets.lake import DEFAULT_FLUSH_ROWS, Lake, PartWriter
from assets.normalise import Normaliser
from assets.pages import PageStream, requests_used
from assets.specs import EndpointSpec, FanOut

log = logging.getLogger("assets.extract")
DEFAULT_THRESHOLD = 0.05

Pages = Iterable[tuple[list[dict[str, Any]], datetime]]


class QuarantineRateExceeded(Exception):
    """Too many bad records in one table: the batch is not committed (quarantine is kept)."""


@dataclass(frozen=True)
class ExtractSettings:
    include_pii: bool = False
    flush_rows: int = DEFAULT_FLUSH_ROWS
    quarantine_threshold: float = DEFAULT_THRESHOLD
    today: date | None = None
    horizon_days: int = 90


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
    try:
        for page, extracted_at in pages:
            if spec.cursor_field is not None:
                seen = [r.get(spec.cursor_field) for r in page]
                top = max((v for v in seen if isinstance(v, int)), default=None)
                cursor = top if cursor is None or (top is not None and top > cursor) else cursor
            if spec.record_filter is not None:
                page = [r for r in page if spec.record_filter(r)]
            if not page:
                continue
            result = normaliser.normalise(page, extracted_at)
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
    except BaseException:
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
