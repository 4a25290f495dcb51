"""The nightly sweep: what the event feed may have missed, and what differed.

Reservations modified since the last sweep mark (in the service's clock), the reservation ids
(`assets.reconcile`), the small reference lists and finance over a longer window
(`assets.finance.sweep_window`) are compared with the lake; only what differs lands, and the
run's `diffs` say per table what was new, changed or removed. Free of Dagster.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pyarrow.compute as pc

from assets import reconcile
from assets.catalogue import CATALOGUE
from assets.clock import settle_run
from assets.diff import diff_against_lake
from assets.endpoints import Catalogue
from assets.fetch import by_ids, run_sync
from assets.finance import sweep_window
from assets.landing import keys_of
from assets.pages import account
from assets.refusal import refusals_changed
from assets.run import ChangeRun
from assets.run_report import RunReport, pending_on_failure
from assets.settings import IngestSettings, OpenClient
from lake.state import SWEEP_STATE, fresh_batch_id, mark_warehouse_pending, write_as_of
from lake.store import Lake


def latest_modified(lake: Lake) -> str | None:
    current = lake.current("reservations")
    if not current.num_rows or "modified_date" not in current.schema.names:
        return None
    top = pc.max(current.column("modified_date")).as_py()
    return service_time_text(top) if top is not None else None


def service_time_text(moment: datetime) -> str:
    """The service's datetime text: UTC, no offset, milliseconds."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


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
    lake's current state; only records that differ land. Last, finance over the longer window
    (`assets.finance.sweep_window`, 35 days). `report.diffs` says, per table, how many were
    new, changed or removed, with a sample of keys (`reservation_ids`: the id read).
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
    with settings.writer_lock(lake):  # held for the id read and every landing
        batch_id = fresh_batch_id(lake, batch_id)
        report = RunReport(batch_id, "sweep")
        state = lake.read_state(SWEEP_STATE) or {}
        since_text = state.get("modified_since")
        if since_text is None:
            since_text = latest_modified(lake)
        since = datetime.fromisoformat(since_text) if since_text else None
        new_mark: dict[str, Any] = {}

        async def main() -> None:
            async with open_client() as service:
                run = ChangeRun(lake, service, settings, batch_id, report, catalogue=catalogue)
                try:
                    await settle_run(run)  # the service's date: the id read's due date, finance
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
                        service_time_text(seen) if seen is not None else since_text
                    )
                    # Finance over the longer window: late entries and corrections too.
                    await run.refresh_finance(sweep_window(lake, run.settings))
                finally:
                    account(report, service)

        with pending_on_failure(lake, batch_id, report):
            run_sync(main)
        assert report.as_of is not None  # settled by the run
        lake.write_state(
            SWEEP_STATE,
            batch_id,
            {
                "modified_since": new_mark.get("modified_since", since_text),
                "business_date": report.as_of.business_date.isoformat(),
                "batch_id": batch_id,
            },
        )
        write_as_of(lake, batch_id, report.as_of)
        # a list refused now is read in full by the next incremental run (`assets.refusal`)
        changed = refusals_changed(lake, batch_id, report.refused, ())
        mark_warehouse_pending(lake, batch_id, report.tables | changed)
    report.seconds = time.perf_counter() - started
    return report
