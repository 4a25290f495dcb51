"""`reservoir run`: start the embedded sandbox (in a child process) when no service is configured,
run the job in this process with live progress, and end with a summary a newcomer can act on.

Running in-process (not through a daemon) keeps the first experience to one command, and the
run is still recorded in the Dagster instance under `<data dir>/dagster_home`, so `make dev`
shows it in the UI.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import dagster as dg
import stamina.instrumentation
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
from warehouse.asof import current_as_of


class RunError(Exception):
    """The run could not start or did not succeed; the message says why in one line."""


@dataclass(frozen=True)
class ServiceTarget:
    base_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str
    # An override of the business date (ISO); None = the service's date, which every run reads
    # from the service (the embedded sandbox's clock included): never this machine's clock.
    today: str | None = None
    sandbox: Any = None  # the sandbox handle when embedded

    @property
    def source(self) -> str:
        """What the lake records as its source (the embedded sandbox by its world)."""
        if self.sandbox is not None:
            world = self.sandbox.settings
            profile = "" if world.profile == "default" else f", profile {world.profile}"
            return f"the embedded sandbox (seed {world.seed}, scale {world.scale}{profile})"
        return f"the service at {self.base_url} (scope {self.scope or '-'})"

    def client_config(self, settings: Settings, **overrides: Any) -> Any:
        """The client's settings for this service under the run's limits, with `overrides`
        (a probe's short retries and timeouts)."""
        from service.config import ServiceConfig

        return ServiceConfig(
            base_url=self.base_url,
            client_id=self.client_id,
            client_secret=self.client_secret,
            scope=self.scope,
            max_concurrency=settings.max_concurrency,
            max_requests=settings.max_requests,
            max_response_bytes=round(settings.max_response_mb * 1024 * 1024),
            **overrides,
        )

    @classmethod
    def from_sandbox(cls, handle: Any) -> ServiceTarget:
        """A running sandbox (`sandbox.runner.SandboxHandle`, or `sandbox.process.SandboxProcess`
        served by a child process) as the run's service."""
        return cls(
            handle.base_url,
            handle.client_id,
            handle.client_secret,
            handle.scope,
            sandbox=handle,
        )


@contextlib.contextmanager
def service_target(
    settings: Settings, *, scale: str, seed: int, profile: str = "default"
) -> Iterator[ServiceTarget]:
    """The configured service, or an embedded sandbox for the duration of the block."""
    if not settings.uses_sandbox:
        assert settings.base_url and settings.client_id and settings.client_secret
        yield ServiceTarget(
            settings.base_url,
            settings.client_id,
            settings.client_secret,
            settings.scope or "",
        )
        return
    # The CLI is the sandbox's starter. Its own process keeps the world's memory and its GIL out
    # of the run's, so serving and landing use both cores (sandbox/process.py).
    from sandbox.encode import READ_ONCE_CACHE_BYTES
    from sandbox.process import SandboxStartError, run_sandbox_process
    from sandbox.settings import SandboxSettings

    # A run reads the world once: the encode cache needs room for read-ahead batches only
    # (1 GiB would put a large world's sandbox over 3 GB; docs/benchmarks.md, session 10).
    sandbox = SandboxSettings(
        seed=seed, scale=scale, profile=profile, encode_cache_bytes=READ_ONCE_CACHE_BYTES
    )
    try:
        with run_sandbox_process(sandbox) as sb:
            yield ServiceTarget.from_sandbox(sb)
    except SandboxStartError as exc:  # only starting raises it
        raise RunError(f"{exc}; nothing was written") from None


SECRET_ENV = "RESERVOIR_CLIENT_SECRET"


@contextlib.contextmanager
def secret_in_environment(secret: str) -> Iterator[None]:
    """The run's client secret in `RESERVOIR_CLIENT_SECRET` for the duration of the run.

    Resources take the secret as `dg.EnvVar`, resolved when the run starts: a literal value
    would be written into the job snapshot in Dagster's run storage. Against the real service the
    variable already holds it; for the embedded sandbox it is set here and restored after.
    """
    saved = os.environ.get(SECRET_ENV)
    os.environ[SECRET_ENV] = secret
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(SECRET_ENV, None)
        else:
            os.environ[SECRET_ENV] = saved


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


PREFLIGHT_RETRIES = 2
PREFLIGHT_TIMEOUT_SECONDS = 10.0


def preflight(settings: Settings, target: ServiceTarget) -> None:
    """One authenticate and one small request before the job starts.

    A wrong credential, an unreachable host or a plain-HTTP remote URL then ends the command in
    a second with one line, instead of every asset spending the client's retry budget first.
    """
    from service.api import ReservationService
    from service.errors import ServiceError, ServiceUnavailable
    from service.sync import run

    try:
        config = target.client_config(
            settings,
            max_retries=PREFLIGHT_RETRIES,
            max_retry_seconds=PREFLIGHT_TIMEOUT_SECONDS,
            timeout=PREFLIGHT_TIMEOUT_SECONDS,
        )

        async def probe() -> None:
            async with ReservationService.connect(config) as service:
                await service.latest_event_id()

        run(probe())
    except ServiceUnavailable as exc:
        if exc.status is not None:  # it answered, with 429 or 5xx every time
            raise RunError(
                f"the service at {target.base_url} answered but kept failing ({exc}); nothing "
                "was written, try again later"
            ) from None
        raise RunError(
            f"the service at {target.base_url} did not answer ({exc}); check RESERVOIR_BASE_URL "
            "and that the host is reachable from here"
        ) from None
    except ServiceError as exc:
        raise RunError(f"{exc} (checked before the run; nothing was written)") from None


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
    if asset_selection is None:
        return job.execute_in_process(
            instance=instance,
            resources=resources,
            raise_on_error=False,
            run_config=run_config,
            tags=tags,
            partition_key=partition_key,
        )
    return dg.materialize(
        [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)],
        selection=asset_selection,
        instance=instance,
        resources=resources,
        raise_on_error=False,
        run_config=run_config,
        tags=tags,
        partition_key=partition_key,
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
) -> RunSummary:
    """Run the main job once and print its summary; raises RunError with a one-line reason."""
    from pipelines.definitions import defs
    from pipelines.lake_assets import run_config

    console = console or Console()
    # The client counts its retries in the run's metadata; one line per retry on the terminal
    # would bury the progress display and the one-line errors.
    stamina.instrumentation.set_on_retry_hooks([])
    instance = prepare_instance(settings)
    asset_selection = resolve_selection(defs, select)
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        if target is None:
            target = stack.enter_context(
                service_target(settings, scale=scale, seed=seed, profile=profile)
            )
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
