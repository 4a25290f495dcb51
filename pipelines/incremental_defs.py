"""Incremental jobs (event feed, webhook refresh, nightly sweep) with their sensors and schedule.

Why op jobs and not assets: the lake tables are already assets (`["lake", <table>]`, one
multi-asset per endpoint) and the warehouse models too; an asset key can be defined once. These
jobs write *deltas* into those same tables, so their ops report runtime `AssetMaterialization`s
for the tables and models they touched, and the asset graph stays the one the full extract
defines.

Each job lands through `assets.changes`, which holds the lake's writer lock for the whole
landing, so two jobs (or two runs of one job) never interleave batches; the sensors additionally
skip while a run of their job is queued or running. All jobs use the in-process executor, like
the full extract (one client, one concurrency budget).

`incremental_defs` is merged into the code location by `pipelines/definitions.py`; it relies on
that location's `service` and `lake` resources.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import dagster as dg

from assets.changes import (
    DEFAULT_EVENT_OVERLAP,
    DEFAULT_MAX_EVENTS,
    ChangeSettings,
    RunReport,
    apply_changes,
    refresh_reservations,
    refresh_warehouse,
    sweep,
)
from assets.reconcile import DEFAULT_EVERY_DAYS, DEFAULT_MAX_REMOVED_SHARE
from pipelines.resources import LakeResource, ReservationServiceResource
from pipelines.schedules import SCHEDULES
from pipelines.sensors import (
    INCREMENTAL_JOB,
    REFRESH_OP,
    SENSORS,
    SWEEP_JOB,
    WEBHOOK_JOB,
)


def _overlap(seconds: float) -> timedelta:
    if seconds < 0:
        raise dg.Failure(
            f"event_overlap_seconds must be 0 (no overlap window) or more, not {seconds}"
        )
    return timedelta(seconds=seconds)


def change_settings(lake: LakeResource, **overrides: Any) -> ChangeSettings:
    """The lake resource's extraction rules as incremental settings."""
    return ChangeSettings(
        today=lake.today(),
        horizon_days=lake.availability_horizon_days,
        include_pii=lake.include_customer_pii,
        flush_rows=lake.flush_rows,
        quarantine_threshold=lake.quarantine_threshold,
        **overrides,
    )


def _lake_events(report: RunReport) -> Iterator[dg.AssetMaterialization]:
    """One materialization per lake table that received rows.

    The run's requests are reported once (on the first table) so that summing `requests_used`
    over a run's materializations gives the run's requests; quarantined records sit on the
    table their stream is named after.
    """
    for i, name in enumerate(sorted(report.tables)):
        rows = sum(r.rows.get(name, 0) for r in report.landed.values())
        tomb = sum(r.tombstones for r in report.landed.values() if r.spec == name)
        quarantined = sum(r.quarantined for r in report.landed.values() if r.spec == name)
        yield dg.AssetMaterialization(
            asset_key=dg.AssetKey(["lake", name]),
            description=f"{report.mode} batch",
            metadata={
                "dagster/row_count": rows,
                "tombstones": tomb,
                "quarantined_records": quarantined,
                "requests_used": report.requests if i == 0 else 0,
                "batch_id": report.batch_id,
                "batch_kind": "delta",
                "mode": report.mode,
            },
        )


def _report_metadata(report: RunReport) -> dict[str, Any]:
    summary = report.summary()
    return {
        "batch_id": report.batch_id,
        "mode": report.mode,
        "cursor_before": dg.MetadataValue.int(report.cursor_before or 0),
        "cursor_after": dg.MetadataValue.int(report.cursor_after or 0),
        "requests_used": report.requests,
        "seconds": round(report.seconds, 3),
        "tables": dg.MetadataValue.json(sorted(report.tables)),
        "plan": dg.MetadataValue.json(summary["plan"]),
        "landed": dg.MetadataValue.json(summary["rows"]),
        "differences": dg.MetadataValue.json(summary["diffs"]),
        "notes": dg.MetadataValue.json(report.notes),
    }


@dg.op(
    description="Read the event feed since the lake's cursor, refetch what changed, land delta "
    "batches, then move the cursor (a first run takes the full snapshot).",
    out=dg.Out(list, description="Lake tables that received rows."),
    config_schema={
        "max_events": dg.Field(int, default_value=DEFAULT_MAX_EVENTS),
        "event_overlap_seconds": dg.Field(
            float,
            default_value=DEFAULT_EVENT_OVERLAP.total_seconds(),
            description="Re-read the events of this span (by eventDate) before the cursor and "
            "apply those not applied yet (events that became visible late); 0 turns it off.",
        ),
    },
)
def apply_events(
    context,  # type: ignore[no-untyped-def]  # dagster checks the annotation by name
    service: ReservationServiceResource,
    lake: LakeResource,
) -> Iterator[Any]:
    report = apply_changes(
        lake.lake(),
        service.open_client,
        change_settings(
            lake,
            max_events=context.op_config["max_events"],
            event_overlap=_overlap(context.op_config["event_overlap_seconds"]),
        ),
        batch_id=lake.batch_id_for(context),
    )
    context.log.info(
        f"{report.mode}: events {report.cursor_before} -> {report.cursor_after}, "
        f"{len(report.tables)} tables, {report.requests} requests"
    )
    yield from _lake_events(report)
    yield dg.Output(sorted(report.tables), metadata=_report_metadata(report))


@dg.op(
    name=REFRESH_OP,
    description="Refetch the reservations named by webhook pushes; mark the pushes processed "
    "only after the refresh has landed.",
    out=dg.Out(list, description="Lake tables that received rows."),
    config_schema={"reservation_ids": [int], "webhook_ids": [str]},
)
def refresh_from_webhooks(
    context,  # type: ignore[no-untyped-def]
    service: ReservationServiceResource,
    lake: LakeResource,
) -> Iterator[Any]:
    from pipelines.webhook_inbox import WebhookInbox

    reservation_ids: list[int] = list(context.op_config["reservation_ids"])
    webhook_ids: list[str] = list(context.op_config["webhook_ids"])
    report = refresh_reservations(
        lake.lake(),
        service.open_client,
        change_settings(lake),
        reservation_ids,
        batch_id=lake.batch_id_for(context),
    )
    marked = WebhookInbox(lake.data_dir).mark_processed(webhook_ids)
    context.log.info(f"refreshed {len(reservation_ids)} reservations, marked {marked} webhooks")
    yield from _lake_events(report)
    meta = _report_metadata(report)
    meta["webhooks_marked"] = marked
    yield dg.Output(sorted(report.tables), metadata=meta)


@dg.op(
    description="Nightly reconciliation: the service's reservation ids (reservations it no "
    "longer has are tombstoned), reservations modified since the last sweep and the small "
    "reference lists, compared with the lake; only what differs lands.",
    out=dg.Out(list, description="Lake tables that received rows."),
    config_schema={
        "id_reconcile_every_days": dg.Field(
            int,
            default_value=DEFAULT_EVERY_DAYS,
            description="Reconcile reservation ids every N business days; 0 = off.",
        ),
        "id_reconcile_max_share": dg.Field(
            float,
            default_value=DEFAULT_MAX_REMOVED_SHARE,
            description="Refuse (fail the run, tombstone nothing) when the id read would "
            "remove more than this share of the lake's reservations.",
        ),
        "id_page_size": dg.Field(
            dg.Noneable(int),
            default_value=None,
            description="Page size asked for by the id read; default: the larger of the "
            "client's page size and 2000 (the service clamps it to its maximum).",
        ),
    },
)
def reconcile(
    context,  # type: ignore[no-untyped-def]
    service: ReservationServiceResource,
    lake: LakeResource,
) -> Iterator[Any]:
    cfg = context.op_config
    report = sweep(
        lake.lake(),
        service.open_client,
        change_settings(lake, id_reconcile_every_days=cfg["id_reconcile_every_days"]),
        batch_id=lake.batch_id_for(context),
        id_max_removed_share=cfg["id_reconcile_max_share"],
        id_page_size=cfg["id_page_size"],
    )
    differing = {
        k: v
        for k, v in report.diffs.items()
        if v.get("new") or v.get("changed") or v.get("removed") or v.get("reports_differing")
    }
    context.log.info(f"sweep found differences in {sorted(differing) or 'no table'}")
    yield from _lake_events(report)
    meta = _report_metadata(report)
    meta["tables_with_differences"] = dg.MetadataValue.json(sorted(differing))
    yield dg.Output(sorted(report.tables), metadata=meta)


@dg.op(
    description="Rebuild only the warehouse models that read the changed lake tables "
    "(plus any left pending by a failed build) and publish the file atomically.",
)
def refresh_warehouse_models(
    context,  # type: ignore[no-untyped-def]
    tables,  # type: ignore[no-untyped-def]  # list of lake table names
    lake: LakeResource,
) -> Iterator[Any]:
    result = refresh_warehouse(lake.data_dir, tables=tables)
    if result is None:
        context.log.info("no changed tables: warehouse left as it is")
        yield dg.Output(None, metadata={"models_rebuilt": 0})
        return
    for qualified, model in sorted(result.models.items()):
        layer, name = qualified.split(".", 1)
        yield dg.AssetMaterialization(
            asset_key=dg.AssetKey(["warehouse", layer, name]),
            metadata={"dagster/row_count": model.row_count, "build_id": result.build_id},
        )
    yield dg.Output(
        None,
        metadata={
            "models_rebuilt": len(result.models),
            "build_id": result.build_id,
            "seconds": round(result.seconds, 3),
        },
    )


@dg.job(
    name=INCREMENTAL_JOB,
    description="Apply the event feed since the cursor to the lake, then refresh the models "
    "that depend on the changed tables.",
    executor_def=dg.in_process_executor,
    tags={"reservoir/lake_writer": "true"},
)
def incremental_job() -> None:
    refresh_warehouse_models(apply_events())


@dg.job(
    name=WEBHOOK_JOB,
    description="Refresh reservations named by webhook pushes, then the models that read them.",
    executor_def=dg.in_process_executor,
    tags={"reservoir/lake_writer": "true"},
)
def webhook_refresh_job() -> None:
    refresh_warehouse_models(refresh_from_webhooks())


@dg.job(
    name=SWEEP_JOB,
    description="Nightly reconciliation of the lake with the service, then the models that "
    "read what differed.",
    executor_def=dg.in_process_executor,
    tags={"reservoir/lake_writer": "true"},
)
def sweep_job() -> None:
    refresh_warehouse_models(reconcile())


INCREMENTAL_JOBS = [incremental_job, webhook_refresh_job, sweep_job]

incremental_defs = dg.Definitions(
    jobs=INCREMENTAL_JOBS,
    sensors=SENSORS,
    schedules=SCHEDULES,
)
