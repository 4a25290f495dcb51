"""Incremental extraction: the event feed -> a refresh plan -> delta batches -> the event cursor.

Why this shape:

* Events are hints, not data (interface "Events"; real-service-notes section 7): an event says
  *which* entity changed, so the plan only collects ids per event type, and the entities are
  refetched with id-list filters. Many events about one reservation cost one id in one request.
* The plan is a pure function of the events (`plan_changes`), so its rules are unit-tested
  without HTTP: the last action per entity wins, DELETE becomes a tombstone, a customer MERGE is
  a `customer_merges` row plus a tombstone for the removed customer plus a refresh of the
  survivor, and unknown event types are counted, never fatal.
* Landing uses the assets' own `Normaliser` and lake writers (same columns, same quarantine rule)
  into one delta batch per run; children are committed before their parents, so a reader never
  sees a refetched reservation with its old bill.
* The cursor (`lake/_state/event_cursor/<batch_id>.parquet`, newest wins) is written only after
  every table of the run has committed. A crash anywhere before that leaves the cursor where it
  was, and the rerun replays the same events (refetching is idempotent: the newest batch wins).
* Some changes produce no events: the interface says nothing is logged when a record becomes
  inactive because a date passed, and the finance tables have no event type at all. So each run
  also re-reads what is small and time-driven: recent journal reports and their entries and
  cash clearances (windows from each table's last read, `assets.finance`) and, when the business
  date has moved, the availability horizon and the small reference lists (these are compared
  with the lake and only land when they differ).
* The business date is the service's date (`assets.clock`), never this machine's: each run reads
  it from the service and records it with the run state (`lake.state.write_as_of`).
* A writer lock (`lake/_state/writer.lock`, `flock`) makes sure two runs (event feed, webhook
  refresh, sweep) never interleave their batches.

The nightly sweep lives in `assets/sweep.py` (re-exported here). Everything here is free of
Dagster; `pipelines/lake_assets.py` runs it in every mode.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from assets.catalogue import CATALOGUE
from assets.clock import settle, settle_run
from assets.endpoints import Catalogue
from assets.fetch import run_sync
from assets.finance import incremental_window, record_full_reads
from assets.full import full_snapshot, stream_notes
from assets.pages import account, service_requests
from assets.plan import (
    ChangePlan,
    as_int,
    next_cursor,
    not_yet_applied,
    plan_changes,
    unique_events,
)
from assets.refusal import READ_AGAIN, read_refused, refusals_changed
from assets.run import ChangeRun
from assets.run_report import RunReport, pending_on_failure
from assets.settings import IngestSettings, OpenClient
from assets.sweep import latest_modified, sweep
from lake.state import (
    SWEEP_STATE,
    AsOf,
    Cursor,
    fresh_batch_id,
    mark_warehouse_pending,
    next_batch_id,
    read_cursor,
    write_as_of,
    write_cursor,
)
from lake.store import Lake
from lake.tables import TABLES

__all__ = ["apply_changes", "bootstrap", "refresh_reservations", "sweep"]  # sweep: assets.sweep

log = logging.getLogger(__name__)


def _drop_landed_merges(lake: Lake, plan: ChangePlan) -> int:
    """Leave out of the plan the MERGE events whose `customer_merges` row the lake already has
    (same eventId): a replayed window (unknown applied set) or a rerun after a crash must not
    land a merge row twice. The survivor's refresh and the removed id's tombstone stay (they are
    idempotent). Returns how many were dropped."""
    if not plan.merges:
        return 0
    current = lake.current("customer_merges")
    landed = {i for i in current.column("event_id").to_pylist() if i is not None}
    if not landed:
        return 0
    keep = [m for m in plan.merges if as_int(m.get("eventId")) not in landed]
    dropped = len(plan.merges) - len(keep)
    plan.merges = keep
    return dropped


def bootstrap(
    lake: Lake,
    open_client: OpenClient,
    settings: IngestSettings,
    *,
    batch_id: str | None = None,
    catalogue: Catalogue = CATALOGUE,
) -> RunReport:
    """First run: the feed's high-water mark, then the full snapshot, then the cursor.

    Reading the mark *before* the snapshot means a change made while the snapshot runs has an
    event after the mark, so the first incremental run replays it; reading it after would lose it.
    """
    started = time.perf_counter()
    batch_id = fresh_batch_id(lake, batch_id)
    report = RunReport(batch_id, "bootstrap")

    async def mark() -> tuple[int, str | None, int, IngestSettings, AsOf]:
        async with open_client() as service:
            # The newest event's id and date in one request: the date is the first
            # incremental run's overlap mark (without it, that run asks for it). Its response
            # states the service's date too: the run's business date.
            newest = await service.latest_event()
            hwm = as_int(newest.get("eventId")) if newest else None
            when = newest.get("eventDate") if newest and hwm is not None else None
            dated, as_of = await settle(service, settings, [newest])
            used = service_requests(service)
            return int(hwm or 0), when if isinstance(when, str) else None, used, dated, as_of

    with settings.writer_lock(lake):
        hwm, hwm_date, used, settings, report.as_of = run_sync(mark)
        report.landed.update(
            full_snapshot(
                lake, open_client, settings, batch_id, specs=catalogue.specs, refused=report.refused
            )
        )
        report.requests = used + sum(r.requests for r in report.landed.values())
        record_full_reads(lake, batch_id, report.landed, settings.business_date)
        report.notes.extend(stream_notes(report.landed.values()))
        write_cursor(lake, batch_id, Cursor(hwm, hwm_date, settings.business_date, batch_id))
        write_as_of(lake, batch_id, report.as_of)
        refusals_changed(lake, batch_id, report.refused, report.landed)
        if lake.read_state(SWEEP_STATE) is None:
            lake.write_state(
                SWEEP_STATE,
                batch_id,
                {
                    "modified_since": latest_modified(lake),
                    "business_date": settings.business_date.isoformat(),
                    "batch_id": batch_id,
                },
            )
        mark_warehouse_pending(lake, batch_id, set(TABLES))
    report.cursor_after = hwm
    report.seconds = time.perf_counter() - started
    return report


def apply_changes(
    lake: Lake,
    open_client: OpenClient,
    settings: IngestSettings,
    *,
    batch_id: str | None = None,
    on_landed: Callable[[str], None] | None = None,
    bootstrap_if_needed: bool = True,
    catalogue: Catalogue = CATALOGUE,
) -> RunReport:
    """One incremental run: events since the cursor -> delta batches -> cursor -> (warehouse).

    Without a cursor the run bootstraps (mark, full snapshot, cursor). The warehouse is not
    built here: the tables that changed are recorded as pending (`warehouse_pending` state) and
    `refresh_warehouse` builds the models that depend on them.
    """
    cursor = read_cursor(lake)
    if cursor is None:
        if not bootstrap_if_needed:
            raise RuntimeError("no event cursor in the lake: run the bootstrap (full) first")
        return bootstrap(lake, open_client, settings, batch_id=batch_id, catalogue=catalogue)
    started = time.perf_counter()
    with settings.writer_lock(lake):
        cursor = read_cursor(lake) or cursor  # another writer may have moved it meanwhile
        batch_id = fresh_batch_id(lake, batch_id)
        report = RunReport(batch_id, "incremental", cursor_before=cursor.event_id)

        async def main() -> tuple[Cursor, IngestSettings]:
            async with open_client() as service:
                run = ChangeRun(lake, service, settings, batch_id, report, on_landed, catalogue)
                try:
                    return await _incremental(run, cursor), run.settings
                finally:
                    account(report, service)

        with pending_on_failure(lake, batch_id, report):
            new_cursor, dated = run_sync(main)
        # Only now, with every table committed, may the cursor move.
        write_cursor(lake, batch_id, new_cursor)
        if report.as_of is not None:
            write_as_of(lake, batch_id, report.as_of)
        report.cursor_after = new_cursor.event_id
        changed = _read_refused_again(lake, open_client, dated, report, catalogue)
        mark_warehouse_pending(lake, batch_id, report.tables | changed)
    report.seconds = time.perf_counter() - started
    return report


def _read_refused_again(
    lake: Lake,
    open_client: OpenClient,
    settings: IngestSettings,
    report: RunReport,
    catalogue: Catalogue,
) -> set[str]:
    """Read in full, in a batch after the run's, every stream an earlier run was refused and
    this one was not: its events were skipped meanwhile, so only a full read is sure to bring
    it up to date. Still refused: recorded again (one request per stream). Returns the tables
    whose refusal began or ended (`assets.full.refusals_changed`)."""
    waiting = [s for s in catalogue.specs if s.name in read_refused(lake)]
    again = [s for s in waiting if s.name not in report.refused]
    batch_id = next_batch_id(lake)
    if again:
        with pending_on_failure(lake, batch_id, report):
            landed = full_snapshot(
                lake, open_client, settings, batch_id, specs=again, refused=report.refused
            )
        report.landed.update(landed)
        report.requests += sum(r.requests for r in landed.values())
        record_full_reads(lake, batch_id, landed, settings.business_date)
        if landed:
            report.notes.append(READ_AGAIN + ", ".join(sorted(landed)))
    else:
        landed = {}
    return refusals_changed(lake, batch_id, report.refused, landed)


async def _incremental(run: ChangeRun, cursor: Cursor) -> Cursor:
    lake = run.lake
    # The overlap window first (events at or below the cursor that became visible late), then
    # the events after the cursor; the window's events the cursor lists as applied are skipped.
    window = await run.read_window(cursor)
    events = await run.read_events(cursor.event_id)
    # The service's date, from the responses just read (no extra request): a new business day
    # re-reads the horizon and the reference lists.
    await settle_run(run, [*(window or ()), *events])
    settings = run.settings
    day_rolled = cursor.business_date is not None and cursor.business_date != settings.business_date
    run.report.day_rolled = day_rolled
    late = not_yet_applied(window or (), cursor)
    plan = plan_changes(unique_events([*late, *events]), run.catalogue)
    merges_dropped = _drop_landed_merges(lake, plan)
    run.report.plan = plan.summary()
    run.report.plan["window"] = {
        "read": None if window is None else len(window),
        "applied": len(late),
        "merges_already_landed": merges_dropped,
    }
    if late:
        log.info("%d event(s) in the overlap window had not been applied yet", len(late))
    if plan.not_modelled:
        log.info("events not modelled (counted, skipped): %s", dict(plan.not_modelled))
    if plan.unknown:
        log.warning("unknown events (counted, skipped): %s", dict(plan.unknown))

    # Reference data first: rates and availability scopes depend on which types still exist.
    removed_types = set(plan.delete.get("accommodation_types", set()))
    reconciled: set[str] = set()
    listed_out: dict[str, set[int]] = {}  # ids a reference list re-read no longer has
    for name in run.catalogue.reference_lists:
        # a list whose events name a scope, not a record (allotments: the type), is re-read
        # whole when one arrives (`Catalogue.relisted_by_events`)
        named = name in run.catalogue.relisted_by_events and plan.refresh.get(name)
        if day_rolled or named:
            diff = await run.reconcile_list(name)
            reconciled.add(name)
            listed_out[name] = {k[0] for k in diff.removed}
            if name == "accommodation_types":
                removed_types |= {k[0] for k in diff.removed}
    run.land_merges(plan.merges)
    # Streams refetched by id, in catalogue order: what reservations refer to lands before them
    # (a list re-read in full just now is already current).
    for name in run.catalogue.keyed:
        if name not in reconciled:
            await run.refresh_keyed(
                name, plan.refresh.get(name, set()), plan.delete.get(name, set())
            )
    await run.refresh_rates(plan.refresh.get("rates", set()), removed_types)
    for name in run.catalogue.holder_scoped:
        spec = run.catalogue.by_name[name]
        gone = {  # holders removed in this run (deleted, or gone from their list): records go too
            (h.kind, i)
            for h in spec.holders
            for i in plan.delete.get(h.table, set()) | listed_out.get(h.table, set())
        }
        await run.refresh_holders(name, plan.holders.get(name, set()), gone)
    avail = plan.refresh.get("availability", set())
    n_types = max(len(lake.current_ids("accommodation_types", "resource_id")), 1)
    whole = day_rolled or len(avail) >= settings.availability_full_share * n_types
    await run.refresh_availability(avail, removed_types, whole_horizon=whole)
    await run.refresh_finance(incremental_window(lake, settings))
    return next_cursor(
        cursor,
        window,
        events,
        overlap=settings.event_overlap,
        business_date=settings.business_date,
        batch_id=run.batch_id,
    )


def refresh_reservations(
    lake: Lake,
    open_client: OpenClient,
    settings: IngestSettings,
    reservation_ids: Iterable[int],
    *,
    batch_id: str | None = None,
    catalogue: Catalogue = CATALOGUE,
) -> RunReport:
    """Refetch these reservations (webhook pushes) as a delta; vanished ones are tombstoned.

    The event cursor is not touched: the feed will carry the same changes and refetching them
    again is harmless.
    """
    started = time.perf_counter()
    ids = {int(i) for i in reservation_ids}
    with settings.writer_lock(lake):
        batch_id = fresh_batch_id(lake, batch_id)
        report = RunReport(batch_id, "webhook")
        report.plan = {"refresh": {"reservations": len(ids)}}

        async def main() -> None:
            async with open_client() as service:
                run = ChangeRun(lake, service, settings, batch_id, report, catalogue=catalogue)
                try:
                    await run.refresh_keyed("reservations", ids, set())
                finally:
                    account(report, service)

        if ids:
            with pending_on_failure(lake, batch_id, report):
                run_sync(main)
        mark_warehouse_pending(lake, batch_id, report.tables)
    report.seconds = time.perf_counter() - started
    return report
