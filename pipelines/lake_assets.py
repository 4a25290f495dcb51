"""The lake as Dagster assets, the same in every run mode.

One multi-asset (`lake`) holds every lake table of the catalogue (`["lake", <table>]`, grouped by
source area). Its run config says which mode lands the data; every mode goes through the
ingestion engine (`assets.modes`, `assets.full`) and ends the same way: one materialization per selected
table (rows landed by this run, which may be 0) and the tables' checks (unique keys in the
current state; the quarantine rate). So the full job, `reservoir run`, the event-feed sensor, the
webhook sensor and the nightly sweep all record materializations and evaluate checks.

Modes: `full` (every stream read in full, the event cursor untouched), `auto` (the bootstrap when
the lake has no event cursor, else the event feed since it), `incremental` (the event feed; the
bootstrap when no cursor), `webhook` (refetch the reservations of pending webhook pushes, then
mark those pushes processed), `sweep` (the nightly reconciliation).
"""

import os
import socket
from collections.abc import Iterator
from datetime import timedelta
from typing import Any, Literal

import dagster as dg
from pydantic import Field

from assets import progress
from assets.catalogue import CHILD_DESCRIPTIONS, SPECS
from assets.endpoints import refused_area
from assets.full import land_full
from assets.guard import RemovalRefused
from assets.landing import QuarantineRateExceeded
from assets.modes import apply_changes, refresh_reservations, sweep
from assets.reconcile import DEFAULT_MAX_REMOVED_SHARE
from assets.run_report import RunReport
from assets.settings import (
    DEFAULT_EVENT_OVERLAP,
    DEFAULT_EVERY_DAYS,
    DEFAULT_MAX_EVENTS,
    IngestSettings,
)
from lake.state import SourceMismatch, check_source
from pipelines.asset_keys import QUARANTINE_RATE, UNIQUE_KEYS, lake_key
from pipelines.lake_key_counts import KeyCounts
from pipelines.lake_metadata import KINDS, column_schema, reported_requests, results
from pipelines.partitions import TENANTS, partitioned_checks
from pipelines.resources import LakeResource, ReservationServiceResource
from pipelines.run_requests import REQUESTS_TAG
from pipelines.settings import SettingsError, quarantine_limits
from service.errors import RequestBudgetExceeded, ServiceError
from service.streams import leaf_error

LAKE_OP = "lake"
MODE_TAG = "reservoir/lake_mode"  # a job's mode; the run config's `mode` overrides it
PID_TAG = "reservoir/pid"  # the process executing the run (a dead one is failed by the sensors)
HOST_TAG = "reservoir/host"
# The lake's source when the service resource's URL does not name it (`reservoir dev` sets it to
# the embedded sandbox's world, whose URL has a new port every time).
SOURCE_ENV = "RESERVOIR_SOURCE"
Mode = Literal["full", "auto", "incremental", "webhook", "sweep"]
MODES: tuple[Mode, ...] = ("full", "auto", "incremental", "webhook", "sweep")


class LakeRun(dg.Config):
    """How this run lands data in the lake (the `lake` asset's run config)."""

    mode: str | None = Field(
        default=None,
        description="full: read every stream in full; auto/incremental: the event feed since "
        "the lake's cursor (the bootstrap when there is none); webhook: refetch the given "
        "reservations; sweep: the nightly reconciliation. Default: the job's "
        f"`{MODE_TAG}` tag, else full.",
    )
    max_events: int = Field(default=DEFAULT_MAX_EVENTS, description="Events read per run.")
    event_overlap_seconds: float = Field(
        default=DEFAULT_EVENT_OVERLAP.total_seconds(),
        description="Re-read the events of this span (by eventDate) before the cursor and apply "
        "those not applied yet (events that became visible late); 0 turns it off.",
    )
    reservation_ids: list[int] = Field(default=[], description="webhook: reservations to refetch.")
    webhook_ids: list[str] = Field(
        default=[], description="webhook: pushes to mark processed once the refresh has landed."
    )
    id_reconcile_every_days: int = Field(
        default=DEFAULT_EVERY_DAYS,
        description="sweep: reconcile reservation ids every N business days; 0 = off.",
    )
    id_reconcile_max_share: float = Field(
        default=DEFAULT_MAX_REMOVED_SHARE,
        description="sweep: refuse (fail the run, tombstone nothing) when the id read would "
        "remove more than this share of the lake's reservations.",
    )
    max_removed_share: float | None = Field(
        default=None,
        description="Refuse a full batch (fail the run, land nothing of that table) that would "
        "remove more than this share of a table's current records; 1.0 confirms a real mass "
        "deletion. Default: the lake resource's setting (RESERVOIR_MAX_REMOVED_SHARE, 0.5).",
    )
    id_page_size: int | None = Field(
        default=None,
        description="sweep: page size asked for by the id read; default: the larger of the "
        "client's page size and 2000 (the service clamps it to its maximum).",
    )
    quarantine_max_share: float | None = Field(
        default=None,
        description="A table whose quarantined records exceed the larger of this share of its "
        "records and quarantine_floor lands nothing. Default: RESERVOIR_QUARANTINE_MAX_SHARE, "
        "else the lake resource's quarantine_threshold (0.05).",
    )
    quarantine_floor: int | None = Field(
        default=None,
        description="Records any table may quarantine whatever its size (see "
        "quarantine_max_share). Default: RESERVOIR_QUARANTINE_FLOOR, else the lake resource's "
        "quarantine_floor (5).",
    )


def run_config(mode: Mode, **config: Any) -> dict[str, Any]:
    """The run config that lands data in `mode` (for sensors and the CLI)."""
    return {"ops": {LAKE_OP: {"config": {"mode": mode, **config}}}}


def run_mode(context: dg.AssetExecutionContext, config: LakeRun) -> Mode:
    """The run config's mode, else the job's tag, else full."""
    mode = config.mode or context.run.tags.get(MODE_TAG) or "full"
    if mode not in MODES:
        raise dg.Failure(
            f"unknown lake mode {mode!r} (run config `mode` or the {MODE_TAG} tag); use one of "
            + ", ".join(MODES)
        )
    return mode  # type: ignore[return-value]


def _asset_specs() -> list[dg.AssetSpec]:
    out = []
    for spec in SPECS:
        for table in spec.tables:
            root = table is spec.table
            out.append(
                dg.AssetSpec(
                    key=lake_key(table.name),
                    group_name=spec.group,
                    kinds=KINDS,
                    description=spec.description if root else CHILD_DESCRIPTIONS[table.name],
                    deps=[lake_key(d) for d in spec.deps] if root else [],
                    skippable=True,
                    metadata={
                        "dagster/column_schema": column_schema(table),
                        "primary_key": list(table.key),
                        "parent": table.parent or "",
                    },
                )
            )
    return out


def _check_specs() -> list[dg.AssetCheckSpec]:
    unique = [
        (UNIQUE_KEYS, lake_key(t.name), "One current row per primary key.")
        for s in SPECS
        for t in s.tables
    ]
    rate = [
        (
            QUARANTINE_RATE,
            lake_key(s.table.name),
            "Share of source records quarantined in this run.",
        )
        for s in SPECS
    ]
    return partitioned_checks(
        lambda: [
            dg.AssetCheckSpec(name, asset=key, description=text, partitions_def=TENANTS)
            for name, key, text in unique + rate
        ]
    )


def _quarantine_limits(lake: LakeResource, config: LakeRun) -> tuple[float, int]:
    """The run config, else the environment (read now, at run time), else the resource."""
    try:
        env_share, env_floor = quarantine_limits()
    except SettingsError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    share = next(
        v
        for v in (config.quarantine_max_share, env_share, lake.quarantine_threshold)
        if v is not None
    )
    floor = next(
        v for v in (config.quarantine_floor, env_floor, lake.quarantine_floor) if v is not None
    )
    if not 0 <= share <= 1 or floor < 0:
        raise dg.Failure(
            description=f"the quarantine share must lie between 0 and 1 (got {share}) and the "
            f"floor must be 0 or more (got {floor})",
            allow_retries=False,
        )
    return share, floor


def _settings(lake: LakeResource, config: LakeRun, run_id: str = "") -> IngestSettings:
    if config.event_overlap_seconds < 0:
        raise dg.Failure(
            "event_overlap_seconds must be 0 (no overlap window) or more, "
            f"not {config.event_overlap_seconds}"
        )
    share, floor = _quarantine_limits(lake, config)
    return IngestSettings(
        today=lake.today(),
        horizon_days=lake.availability_horizon_days,
        include_pii=lake.include_customer_pii,
        flush_rows=lake.flush_rows,
        max_removed_share=(
            lake.max_removed_share if config.max_removed_share is None else config.max_removed_share
        ),
        quarantine_threshold=share,
        quarantine_floor=floor,
        max_events=config.max_events,
        event_overlap=timedelta(seconds=config.event_overlap_seconds),
        id_reconcile_every_days=config.id_reconcile_every_days,
        normalise_workers=lake.normalise_workers,
        run_label=run_id,
    )


def land(
    context: dg.AssetExecutionContext,
    config: LakeRun,
    service: ReservationServiceResource,
    lake: LakeResource,
    selected: set[str],
) -> RunReport:
    """Run the ingestion engine in the configured mode; raise dg.Failure with its message."""
    settings = _settings(lake, config, context.run.run_id)
    store = lake.lake()
    batch_id = lake.batch_id_for(context)
    mode = run_mode(context, config)
    try:
        source = lake.source or os.environ.get(SOURCE_ENV) or service.source_id()
        check_source(store, source, batch_id)
    except SourceMismatch as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    if mode == "full":
        specs = [s for s in SPECS if selected & {t.name for t in s.tables}]
        failures: dict[str, Exception] = {}
        report = land_full(
            store,
            service.open_client,
            settings,
            batch_id=batch_id,
            specs=specs,
            failures=failures,
        )
        if failures:
            _fail(context, report, failures)
        return report
    try:
        if mode in ("auto", "incremental"):
            return apply_changes(store, service.open_client, settings, batch_id=batch_id)
        if mode == "webhook":
            from pipelines.webhook_inbox import WebhookInbox

            report = refresh_reservations(
                store, service.open_client, settings, config.reservation_ids, batch_id=batch_id
            )
            marked = WebhookInbox(lake.data_dir).mark_processed(list(config.webhook_ids))
            report.notes.append(f"marked {marked} webhook notifications processed")
            return report
        return sweep(
            store,
            service.open_client,
            settings,
            batch_id=batch_id,
            id_max_removed_share=config.id_reconcile_max_share,
            id_page_size=config.id_page_size,
        )
    except (QuarantineRateExceeded, RemovalRefused) as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    except BaseExceptionGroup as group:  # concurrent requests failing alike: say it once
        leaf = leaf_error(group)
        if not isinstance(leaf, ServiceError):
            raise
        retry = not isinstance(leaf, RequestBudgetExceeded)
        raise dg.Failure(description=str(leaf), allow_retries=retry) from group


# Failures a retry would repeat: the run stops and says what to change.
REFUSALS = (QuarantineRateExceeded, RemovalRefused, RequestBudgetExceeded)


def _fail(
    context: dg.AssetExecutionContext, report: RunReport, failures: dict[str, Exception]
) -> None:
    """A full run whose streams partly failed: the others have landed; say which failed."""
    landed = ", ".join(sorted(report.landed)) or "none"
    lines = [f"{name}: {exc}{_core_refusal(name, exc)}" for name, exc in failures.items()]
    context.log.error(f"streams landed: {landed}; failed: {'; '.join(lines)}")
    first = next(iter(failures.values()))
    raise dg.Failure(
        description="; ".join(lines),
        allow_retries=not isinstance(first, REFUSALS),
    ) from first


def _core_refusal(stream: str, exc: Exception) -> str:
    """What to ask for when the service refused a core stream's area (403 or 404)."""
    spec = next((s for s in SPECS if s.name == stream), None)
    area = refused_area(spec, getattr(exc, "status", None)) if spec is not None else None
    if area is None:
        return ""
    return f" (the core area {area[0]}: the marts cannot be built without it; {area[2]})"


def _lock_waits_logged(context: dg.AssetExecutionContext) -> progress.Listener:
    """A run stuck behind another one's lake lock says so in its Dagster event log."""

    def log(event: progress.Event) -> None:
        if isinstance(event, progress.WaitEvent):
            context.log.info(
                f"waiting for the lake's writer lock, held by {event.holder}"
                if event.holder is not None
                else "the lake's writer lock is ours now"
            )

    return log


def build_lake_assets() -> dg.AssetsDefinition:
    """The one multi-asset over every lake table, for every run mode."""

    @dg.multi_asset(
        name=LAKE_OP,
        specs=_asset_specs(),
        check_specs=_check_specs(),
        partitions_def=TENANTS,  # one partition per tenant (`pipelines.partitions`)
        can_subset=True,
        description="Every lake table, landed by the ingestion engine in the run's mode.",
    )
    def _lake(
        context: dg.AssetExecutionContext,
        config: LakeRun,
        service: ReservationServiceResource,
        lake: LakeResource,
    ) -> Iterator[dg.MaterializeResult]:
        context.instance.add_run_tags(
            context.run.run_id, {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}
        )
        selected = {k.path[-1] for k in context.selected_asset_keys}
        checked = {
            t
            for t in selected
            if dg.AssetCheckKey(lake_key(t), UNIQUE_KEYS) in context.selected_asset_check_keys
        }
        # each table's unique-keys check counted as soon as its stream has committed
        with KeyCounts(lake.lake(), checked) as counts:
            unsubscribe = progress.subscribe(_lock_waits_logged(context))
            try:
                report = land(context, config, service, lake, selected)
            finally:
                unsubscribe()
                counts.stop()
            context.log.info(
                f"{report.mode} batch {report.batch_id}: {len(report.tables)} tables landed, "
                f"{report.requests} requests"
            )
            for refusal in report.refused.values():
                context.log.warning(f"refused area {refusal.line()}")
            # what `reservoir status` counts, on the run's record (`pipelines.run_requests`)
            requests = reported_requests(report, selected)
            context.instance.add_run_tags(context.run.run_id, {REQUESTS_TAG: str(requests)})
            yield from results(context, report, lake, selected, counts)

    return _lake


lake_assets = build_lake_assets()


def spec_keys(*names: str) -> list[dg.AssetKey]:
    """The asset keys of the tables that these endpoint streams land (a selection)."""
    by_name = {s.name: s for s in SPECS}
    return [lake_key(t.name) for n in names for t in by_name[n].tables]
