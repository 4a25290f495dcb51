"""The full extract of a set of streams, in dependency order, as one run."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from assets.catalogue import SPECS
from assets.clock import resolve_business_date
from assets.endpoints import EndpointSpec
from assets.extract import run_spec
from assets.finance import record_full_reads
from assets.land_report import LandReport
from assets.refusal import Refusal, parent_refused, refusal_of, refusals_changed
from assets.run_report import RunReport
from assets.settings import IngestSettings, OpenClient
from lake.state import mark_warehouse_pending, next_batch_id, write_as_of
from lake.store import Lake
from service.streams import leaf_error


def full_snapshot(
    lake: Lake,
    open_client: OpenClient,
    settings: IngestSettings,
    batch_id: str,
    *,
    specs: Sequence[EndpointSpec] = SPECS,
    failures: dict[str, Exception] | None = None,
    refused: dict[str, Refusal] | None = None,
) -> dict[str, LandReport]:
    """The full extract (`assets.extract.run_spec` per spec), in dependency order.

    With `failures` given, a spec that fails is recorded there and the others go on (those that
    read its tables are left out); without it, the first failure raises. With `refused` given,
    an optional area the service refuses (`assets.refusal`) is recorded there, and so are the
    optional streams that fan out from it; nothing of them lands and the others go on.
    """
    done: set[str] = set()
    failed: set[str] = set()
    refused_by: dict[str, Refusal] = {}  # table of a refused stream -> its refusal
    reports: dict[str, LandReport] = {}
    pending = list(specs)
    while pending:
        ready = [
            s
            for s in pending
            if all(
                d in done or d not in {t.name for p in pending for t in p.tables} for d in s.deps
            )
        ]
        if not ready:
            raise ValueError("endpoint specs have a dependency cycle")
        for spec in ready:
            pending.remove(spec)
            parent = next((refused_by[d] for d in spec.deps if d in refused_by), None)
            refusal = parent_refused(spec, parent) if parent is not None else None
            if refusal is not None and refused is not None:
                refused[spec.name] = refusal
                refused_by.update(dict.fromkeys(refusal.tables, refusal))
                continue
            if failed & set(spec.deps):
                continue
            started = time.perf_counter()
            try:
                rep = run_spec(
                    spec,
                    lake=lake,
                    batch_id=batch_id,
                    settings=settings,
                    open_client=open_client,
                )
            except Exception as exc:
                refusal = refusal_of(spec, exc) if refused is not None else None
                if refusal is not None and refused is not None:
                    refused[spec.name] = refusal
                    refused_by.update(dict.fromkeys(refusal.tables, refusal))
                    failed.update(refusal.tables)
                    continue
                if failures is None:
                    raise
                failures[spec.name] = _single(exc)
                failed.update(t.name for t in spec.tables)
                continue
            rep.seconds = time.perf_counter() - started
            reports[spec.name] = rep
            done.update(t.name for t in spec.tables)
    return reports


def land_full(
    lake: Lake,
    open_client: OpenClient,
    settings: IngestSettings,
    *,
    batch_id: str | None = None,
    specs: Sequence[EndpointSpec] = SPECS,
    failures: dict[str, Exception] | None = None,
) -> RunReport:
    """A full snapshot of `specs` as one run (the event cursor is not touched); the tables it
    landed are marked pending for the warehouse."""
    started = time.perf_counter()
    with settings.writer_lock(lake):
        # The run's own batch id, as given: re-executing a full run overwrites its own files.
        batch_id = batch_id or next_batch_id(lake)
        report = RunReport(batch_id, "full")
        # The service's date (the availability horizon's first day, the run's as-of date)
        settings, report.as_of = resolve_business_date(open_client, settings)
        report.landed.update(
            full_snapshot(
                lake,
                open_client,
                settings,
                batch_id,
                specs=specs,
                failures=failures,
                refused=report.refused,
            )
        )
        report.requests = sum(r.requests for r in report.landed.values())
        record_full_reads(lake, batch_id, report.landed, settings.business_date)
        write_as_of(lake, batch_id, report.as_of)
        report.notes.extend(stream_notes(report.landed.values()))
        changed = refusals_changed(lake, batch_id, report.refused, report.landed)
        mark_warehouse_pending(lake, batch_id, report.tables | changed)
    report.seconds = time.perf_counter() - started
    return report


def stream_notes(reports: Iterable[LandReport]) -> list[str]:
    """The notes of a full extract's streams, each once, for the run report."""
    return list(dict.fromkeys(note for rep in reports for note in rep.notes))


def _single(error: Exception) -> Exception:
    """The exception that says what went wrong, out of the task groups that raised it."""
    leaf = leaf_error(error)
    return leaf if isinstance(leaf, Exception) else error
