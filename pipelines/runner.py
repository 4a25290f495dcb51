"""`reservoir run`: start the embedded sandbox (in a child process) when no service is configured,
run the job in this process with live progress, and end with a summary a newcomer can act on.

Running in-process (not through a daemon) keeps the first experience to one command, and the
run is still recorded in the Dagster instance under `<data dir>/dagster_home`, so `make dev`
shows it in the UI.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import dagster as dg
from rich.console import Console

from pipelines.instance import prepare_instance
from pipelines.partitions import DEFAULT_TENANT, ensure_partitions, tenant_tags
from pipelines.settings import Settings
from pipelines.summary import (
    ProgressDisplay,
    RunSummary,
    headline_kpis,
    print_summary,
    summarise,
)
from pipelines.target import (
    SECRET_ENV,
    RunError,
    ServiceTarget,
    preflight,
    quiet_retries,
    secret_in_environment,
    service_target,
)
from warehouse.asof import current_as_of


def build_resources(settings: Settings, target: ServiceTarget) -> dict[str, Any]:
    """The run's resources; the secret stays a `dg.EnvVar` (see `secret_in_environment`)."""
    from pipelines.resources import LakeResource, ReservationServiceResource

    resources: dict[str, Any] = {
        "service": ReservationServiceResource(
            base_url=target.base_url,
            client_id=target.client_id,
            client_secret=dg.EnvVar(SECRET_ENV),
            scope=target.scope,
            max_concurrency=settings.max_concurrency,
            max_requests=settings.max_requests,
            max_response_mb=settings.max_response_mb,
            tenant=settings.tenant,
            **settings.client_options,
        ),
        "lake": LakeResource(
            data_dir=str(settings.data_dir.resolve()),
            availability_start=target.today,
            source=target.source,
            max_removed_share=settings.max_removed_share,
            lake_url=settings.lake_url,
            tenant=settings.tenant,
        ),
    }
    from pipelines.warehouse_assets import WarehouseResource

    # The as-of date (booking pace) is the service's date the lake run recorded, unless overridden.
    resources["warehouse"] = WarehouseResource(
        data_dir=str(settings.data_dir.resolve()), as_of=target.today, tenant=settings.tenant
    )
    return resources


def resolve_selection(
    defs: dg.Definitions, select: Sequence[str] | None
) -> list[dg.AssetKey] | None:
    """Map short names (`reservations`, `occupancy_daily`) to asset keys; unknown names fail.

    A table landed by a multi-asset brings its siblings (one request stream lands them all).
    """
    if not select:
        return None
    keys = list(defs.resolve_all_asset_keys())
    chosen: dict[dg.AssetKey, None] = {}
    for name in select:
        matches = [k for k in keys if k.path[-1] == name or k.to_user_string() == name]
        if not matches:
            known = ", ".join(sorted({k.path[-1] for k in keys}))
            raise RunError(f"--select {name!r} matches no table or model; known: {known}")
        for key in matches:
            assets_def = defs.resolve_assets_def(key)
            for sibling in [key] if assets_def.can_subset else sorted(assets_def.keys):
                chosen[sibling] = None
    return list(chosen)


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.event_type_value == "STEP_FAILURE":
            error = event.event_specific_data.error  # type: ignore[union-attr]
            cause = error
            while (
                cause is not None
                and cause.cause is not None
                and "dagster" in cause.cls_name.lower()
            ):
                cause = cause.cause
            message = (
                (cause or error).message.strip().splitlines()[-1]
                if (cause or error)
                else "unknown error"
            )
            return f"step {event.step_key} failed: {message}"
    return "the run failed; see the Dagster UI (make dev) for the event log"


@contextlib.contextmanager
def sigterm_kept() -> Iterator[None]:
    """SIGTERM's handler as it was before a run, once the run ends.

    Dagster's run traps SIGINT and, on the way out, gives SIGTERM whatever SIGINT's handler then
    is (`dagster._utils.interrupts`). A process started with SIGINT ignored (a command a script
    puts in the background without job control) thus came out of its first run with SIGTERM
    ignored too: a plain `kill` no longer stopped `reservoir run` between a tenants file's runs.
    During the run SIGTERM stays Dagster's (it interrupts the run as SIGINT would).
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # Dagster leaves the handlers alone off the main thread
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None and signal.getsignal(signal.SIGTERM) is not before:
            signal.signal(signal.SIGTERM, before)


def execute(
    defs: dg.Definitions,
    job: dg.JobDefinition,
    *,
    instance: dg.DagsterInstance,
    resources: dict[str, Any],
    asset_selection: list[dg.AssetKey] | None,
    run_config: dict[str, Any],
    tags: dict[str, str],
    partition_key: str = DEFAULT_TENANT,
) -> dg.ExecuteInProcessResult:
    """Run a job in this process with the command's resources, for one tenant's partition
    (added to the instance's `tenants` partitions when new).

    A selection runs as an ad-hoc materialization of the code location's assets: Dagster refuses
    to override the resources of a subset of a job that already binds them.
    """
    ensure_partitions(instance, [partition_key])
    options: dict[str, Any] = {
        "instance": instance,
        "resources": resources,
        "raise_on_error": False,
        "run_config": run_config,
        "tags": tags,
        "partition_key": partition_key,
    }
    with sigterm_kept():
        if asset_selection is None:
            return job.execute_in_process(**options)
        return dg.materialize(
            [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)],
            selection=asset_selection,
            **options,
        )


def run_pipeline(
    settings: Settings,
    *,
    mode: str = "auto",
    select: Sequence[str] | None = None,
    scale: str = "small",
    seed: int = 7,
    quiet: bool = False,
    console: Console | None = None,
    target: ServiceTarget | None = None,
    profile: str = "default",
    checked: bool = False,
) -> RunSummary:
    """Run the main job once and print its summary; raises RunError with a one-line reason.

    `checked`: the caller has already passed `target` through `preflight` (the CLI does so
    before it imports this module).
    """
    from pipelines.definitions import defs
    from pipelines.lake_assets import run_config

    console = console or Console()
    quiet_retries()
    instance = prepare_instance(settings)
    asset_selection = resolve_selection(defs, select)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        if target is None:
            target = stack.enter_context(
                service_target(settings, scale=scale, seed=seed, profile=profile)
            )
        target.wait_ready()  # a sandbox the CLI started before these imports
        if not checked:
            preflight(settings, target)
        stack.enter_context(secret_in_environment(target.client_secret))
        resources = build_resources(settings, target)
        job_name, run_mode = choose_job(settings, mode, select)
        lake_mode = "full" if run_mode == "full" else "auto"
        job = defs.resolve_job_def(job_name)
        display = ProgressDisplay(console, enabled=not quiet)
        with display.running():
            result = execute(
                defs,
                job,
                instance=instance,
                resources=resources,
                asset_selection=asset_selection,
                # Failures reach the user as one line (RunError); the full event log, stack traces
                # included, stays in the Dagster instance for `make dev`.
                run_config={
                    **run_config(lake_mode),
                    "loggers": {"console": {"config": {"log_level": "CRITICAL"}}},
                },
                tags={
                    "reservoir/mode": run_mode,
                    "reservoir/launched_by": "cli",
                    **tenant_tags(settings.tenant or DEFAULT_TENANT),
                },
                partition_key=settings.tenant or DEFAULT_TENANT,
            )
        if not result.success:
            raise RunError(_failure_message(result))
        summary = summarise(result, run_mode, time.monotonic() - started)
        summary.as_of = current_as_of(settings.warehouse_path, settings.lake_dir)
        summary.kpis = headline_kpis(settings.warehouse_path, target.today)
        source = target.base_url
        if target.sandbox is not None:  # a sandbox served apart is used only through the URL
            source = (
                f"{target.source}, started for this run at {target.base_url}; to use a sandbox "
                "you serve yourself, set RESERVOIR_BASE_URL and its credentials"
            )
        print_summary(console, summary, settings, source)
        if summary.failed_checks:
            names = ", ".join(f"{c.asset} {c.name}" for c in summary.failed_checks)
            raise RunError(
                f"{len(summary.failed_checks)} check(s) failed: {names}; the data has landed, "
                "but these numbers are not to be trusted. Each check's failing rows are in the "
                "Dagster UI (make dev, the asset's Checks tab)"
            )
        return summary


def choose_job(
    settings: Settings, mode: str, select: Sequence[str] | None = None
) -> tuple[str, str]:
    """Which job a `reservoir run` launches.

    full -> `main_job` (a complete snapshot, the cursor untouched); incremental and auto ->
    `incremental_job`, which bootstraps (high-water mark, snapshot, cursor) when no cursor exists
    and otherwise applies the event feed since it. A selection of assets always runs `main_job`.
    """
    if mode == "full" or select:
        if mode == "incremental":
            raise RunError("--select works with full runs only; drop --select or use --mode full")
        return "main_job", "full"
    if settings.lake_url:  # the store holds the cursor; this data directory may be new
        from lake.remote import DeltaRemote
        from lake.store import Lake

        lake = Lake(settings.lake_dir, DeltaRemote(settings.lake_url))
        has_cursor = lake.read_state("event_cursor") is not None
    else:
        cursor_dir = settings.lake_dir / "_state" / "event_cursor"
        has_cursor = cursor_dir.exists() and any(cursor_dir.glob("*.parquet"))
    return "incremental_job", "incremental" if has_cursor else "bootstrap"
