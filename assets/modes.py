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
  also re-reads what is small and time-driven: recent journal reports and their entries, cash
  clearances since the last business date and, when the business date has moved, the availability
  horizon and the small reference lists (these are compared with the lake and only land when
  they differ).
* A writer lock (`lake/_state/writer.lock`, `flock`) makes sure two runs (event feed, webhook
  refresh, sweep) never interleave their batches.

Everything here is free of Dagster; `pipelines/lake_assets.py` runs it in every mode.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, date, datetime
from typing import Any

import pyarrow.compute as pc

from assets import reconcile
from assets.catalogue import CATALOGUE, Catalogue
from assets.diff import diff_against_lake
from assets.fetch import by_ids, run_sync
from assets.full import full_snapshot, stream_notes
from assets.landing import keys_of
from assets.pages import account, service_requests
from assets.plan import (
    ChangePlan,
    as_int,
    next_cursor,
    not_yet_applied,
    plan_changes,
    unique_events,
)
from assets.run import ChangeRun, RunReport
from assets.settings import IngestSettings, OpenClient
from lake.locks import writer_lock
from lake.state import (
    SWEEP_STATE,
    Cursor,
    fresh_batch_id,
    mark_warehouse_pending,
    read_cursor,
    write_cursor,
)
from lake.store import Lake
from lake.tables import TABLES

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


def _latest_modified(lake: Lake) -> str | None:
    current = lake.current("reservations")
    if not current.num_rows or "modified_date" not in current.schema.names:
        return None
    top = pc.max(current.column("modified_date")).as_py()
    return _service_time(top) if top is not None else None


def _service_time(moment: datetime) -> str:
    """The service's datetime text: UTC, no offset, milliseconds."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


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

    async def mark() -> tuple[int, str | None, int]:
        async with open_client() as service:
            # The newest event's id and date in one request: the date is the first
            # incremental run's overlap mark (without it, that run asks for it).
            newest = await service.latest_event()
            hwm = as_int(newest.get("eventId")) if newest else None
            when = newest.get("eventDate") if newest and hwm is not None else None
            return int(hwm or 0), when if isinstance(when, str) else None, service_requests(service)

    with writer_lock(lake, settings.lock_timeout):
        hwm, hwm_date, used = run_sync(mark)
        report.landed.update(
            full_snapshot(lake, open_client, settings, batch_id, specs=catalogue.specs)
        )
        report.requests = used + sum(r.requests for r in report.landed.values())
        report.notes.extend(stream_notes(report.landed.values()))
        write_cursor(lake, batch_id, Cursor(hwm, hwm_date, settings.business_date, batch_id))
        if lake.read_state(SWEEP_STATE) is None:
            lake.write_state(
                SWEEP_STATE,
                batch_id,
                {
                    "modified_since": _latest_modified(lake),
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
    with writer_lock(lake, settings.lock_timeout):
        cursor = read_cursor(lake) or cursor  # another writer may have moved it meanwhile
        batch_id = fresh_batch_id(lake, batch_id)
        report = RunReport(batch_id, "incremental", cursor_before=cursor.event_id)
        day_rolled = (
            cursor.business_date is not None and cursor.business_date != settings.business_date
        )
        report.day_rolled = day_rolled

        async def main() -> Cursor:
            async with open_client() as service:
                run = ChangeRun(lake, service, settings, batch_id, report, on_landed, catalogue)
                try:
                    return await _incremental(run, cursor, day_rolled)
                finally:
                    account(report, service)

        with _pending_on_failure(lake, batch_id, report):
            new_cursor = run_sync(main)
        # Only now, with every table committed, may the cursor move.
        write_cursor(lake, batch_id, new_cursor)
        report.cursor_after = new_cursor.event_id
        mark_warehouse_pending(lake, batch_id, report.tables)
    report.seconds = time.perf_counter() - started
    return report


async def _incremental(run: ChangeRun, cursor: Cursor, day_rolled: bool) -> Cursor:
    settings, lake = run.settings, run.lake
    # The overlap window first (events at or below the cursor that became visible late), then
    # the events after the cursor; the window's events the cursor lists as applied are skipped.
    window = await run.read_window(cursor)
    events = await run.read_events(cursor.event_id)
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
    if day_rolled:
        for name in run.catalogue.reference_lists:
            diff = await run.reconcile_list(name)
            reconciled.add(name)
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
    avail = plan.refresh.get("availability", set())
    n_types = max(len(lake.current_ids("accommodation_types", "resource_id")), 1)
    whole = day_rolled or len(avail) >= settings.availability_full_share * n_types
    await run.refresh_availability(avail, removed_types, whole_horizon=whole)
    await run.refresh_finance(cursor.business_date)
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
    with writer_lock(lake, settings.lock_timeout):
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
            with _pending_on_failure(lake, batch_id, report):
                run_sync(main)
        mark_warehouse_pending(lake, batch_id, report.tables)
    report.seconds = time.perf_counter() - started
    return report


def sweep(
    lake: Lake,
    open_client: OpenClient,
    settings: IngestSettings,
    *,
    batch_id: str | None = None,
    id_max_removed_share: float | None = None,
    id_page_size: int | None = None,
    catalogue: Catalogue = CATALOGUE,
) -> RunReport:
    """Nightly reconciliation: what the feed may have missed, and what differed.

    First the reservation ids (`assets.reconcile`, every `settings.id_reconcile_every_days`):
    the service's complete id list against the lake's live reservations; those the service no
    longer has are tombstoned (children follow their parent). A read that finds no ids or would
    remove more than `id_max_removed_share` (default 20 %) of the lake raises
    `ReservationIdsRefused` before anything lands. Then reservations modified since the last
    sweep mark (minus an overlap) and the small reference lists in full are compared with the
    lake's current state; only records that differ land. `report.diffs` says, per table, how
    many were new, changed or removed, with a sample of keys (`reservation_ids`: the id read).
    """
    ids_settings = reconcile.IdReconcileSettings(
        every_days=settings.id_reconcile_every_days,
        max_removed_share=(
            reconcile.DEFAULT_MAX_REMOVED_SHARE
            if id_max_removed_share is None
            else id_max_removed_share
        ),
        page_size=id_page_size,
    )
    started = time.perf_counter()
    with writer_lock(lake, settings.lock_timeout):  # held for the id read and every landing
        batch_id = fresh_batch_id(lake, batch_id)
        report = RunReport(batch_id, "sweep")
        state = lake.read_state(SWEEP_STATE) or {}
        since_text = state.get("modified_since")
        if since_text is None:
            since_text = _latest_modified(lake)
        since = datetime.fromisoformat(since_text) if since_text else None
        prev_date = state.get("business_date")
        new_mark: dict[str, Any] = {}

        async def main() -> None:
            async with open_client() as service:
                run = ChangeRun(lake, service, settings, batch_id, report, catalogue=catalogue)
                try:
                    # Before any landing: a refused id read stops the sweep with nothing landed,
                    # and the lake snapshot it compares with cannot move during the read.
                    ids = await reconcile.reconcile_reservation_ids(run, ids_settings)
                    for name in run.catalogue.reference_lists:
                        await run.reconcile_list(name)
                    landing = run.landing("reservations")
                    window = since - settings.sweep_overlap if since else None
                    await run._fill(landing, service.reservation_details(modified_since=window))
                    spec = run.catalogue.by_name["reservations"]
                    report.diffs["recent_tombstones"] = await reconcile.revalidate_tombstones(
                        run, landing, lambda ids: run._fill(landing, by_ids(service, spec, ids))
                    )
                    fetched = landing.fresh()
                    keys = set(keys_of(fetched, ["reservation_id"]))
                    seen = pc.max(fetched.column("modified_date")).as_py() if keys else None
                    diff = diff_against_lake(lake, landing, only_keys=keys)
                    landing.keep_only(diff.differing)
                    # Same landing: two landings of one table in one batch would overwrite parts.
                    diff.removed = reconcile.tombstone_into(landing, ids)
                    report.diffs["reservations"] = diff.summary()
                    run._done("reservations", landing, skipped=not diff.count)
                    reconcile.record(run, ids)
                    new_mark["modified_since"] = (
                        _service_time(seen) if seen is not None else since_text
                    )
                    await run.refresh_finance(date.fromisoformat(prev_date) if prev_date else None)
                finally:
                    account(report, service)

        with _pending_on_failure(lake, batch_id, report):
            run_sync(main)
        lake.write_state(
            SWEEP_STATE,
            batch_id,
            {
                "modified_since": new_mark.get("modified_since", since_text),
                "business_date": settings.business_date.isoformat(),
                "batch_id": batch_id,
            },
        )
        mark_warehouse_pending(lake, batch_id, report.tables)
    report.seconds = time.perf_counter() - started
    return report


@contextlib.contextmanager
def _pending_on_failure(lake: Lake, batch_id: str, report: RunReport) -> Iterator[None]:
    """If the run fails, still mark the tables it committed before failing as pending: they are
    in the lake, and a rerun may find nothing left to land for them (the sweep's diff, a
    reconciled list), so nothing else would get their models rebuilt."""
    try:
        yield
    except BaseException:
        try:
            mark_warehouse_pending(lake, batch_id, report.tables)
        except Exception:  # never hide the run's own error behind this one
            log.exception("could not mark the tables landed before the failure as pending")
        raise
