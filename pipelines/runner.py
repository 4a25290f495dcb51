"""`reservoir run`: start the embedded sandbox when no service is configured, run the job in this
process with live progress, and end with a summary a newcomer can act on.

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
from pathlib import Path
from typing import Any

import dagster as dg
import stamina.instrumentation
from rich.console import Console
from rich.live import Live
from rich.table import Table

from assets import progress
from pipelines.settings import Settings

DAGSTER_YAML = """\
# Written by `reservoir run` when missing. Runs launched by the CLI and by `make dev` share it.
telemetry:
  enabled: false
"""


class RunError(Exception):
    """The run could not start or did not succeed; the message says why in one line."""


@dataclass
class TableLine:
    rows: int = 0
    quarantined: int = 0
    requests: int = 0
    seconds: float = 0.0
    pages: int = 0


@dataclass(frozen=True)
class CheckLine:
    """One asset check evaluated by the run: `passed`, `warned` (failed, warning severity) or
    `failed` (failed, error severity)."""

    asset: str
    name: str
    outcome: str


@dataclass
class RunSummary:
    """What a run did, per table and overall; printed at the end and returned to callers."""

    run_id: str
    mode: str
    seconds: float
    tables: dict[str, TableLine] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)
    kpis: list[tuple[str, str]] = field(default_factory=list)

    extra_requests: int = 0  # requests not attributed to a table (event reads, probes)
    checks: list[CheckLine] = field(default_factory=list)

    @property
    def failed_checks(self) -> list[CheckLine]:
        """Checks that failed with error severity: the run exits non-zero."""
        return [c for c in self.checks if c.outcome == "failed"]

    @property
    def requests(self) -> int:
        return sum(t.requests for t in self.tables.values()) + self.extra_requests


def prepare_instance(settings: Settings) -> dg.DagsterInstance:
    """A persistent Dagster instance under the data directory (shared with `make dev`)."""
    home = settings.dagster_home.resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    os.environ["DAGSTER_HOME"] = str(home)
    return dg.DagsterInstance.get()


@dataclass(frozen=True)
class ServiceTarget:
    base_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str
    today: str | None  # the service's "today" (the sandbox has its own clock)
    sandbox: Any = None  # the sandbox handle when embedded

    @classmethod
    def from_sandbox(cls, handle: Any) -> ServiceTarget:
        """A running sandbox (`sandbox.runner.SandboxHandle`) as the run's service."""
        return cls(
            handle.base_url,
            handle.client_id,
            handle.client_secret,
            handle.scope,
            today=handle.world.now.date().isoformat(),
            sandbox=handle,
        )


@contextlib.contextmanager
def service_target(settings: Settings, *, scale: str, seed: int) -> Iterator[ServiceTarget]:
    """The configured service, or an embedded sandbox for the duration of the block."""
    if not settings.uses_sandbox:
        assert settings.base_url and settings.client_id and settings.client_secret
        yield ServiceTarget(
            settings.base_url,
            settings.client_id,
            settings.client_secret,
            settings.scope or "",
            today=None,
        )
        return
    from sandbox.runner import SandboxSettings, run_sandbox  # the CLI is the sandbox's starter

    with run_sandbox(SandboxSettings(seed=seed, scale=scale)) as handle:
        yield ServiceTarget.from_sandbox(handle)


def build_resources(settings: Settings, target: ServiceTarget) -> dict[str, Any]:
    from pipelines.resources import LakeResource, ReservationServiceResource

    resources: dict[str, Any] = {
        "service": ReservationServiceResource(
            base_url=target.base_url,
            client_id=target.client_id,
            client_secret=target.client_secret,
            scope=target.scope,
            max_concurrency=settings.max_concurrency,
        ),
        "lake": LakeResource(
            data_dir=str(settings.data_dir.resolve()), availability_start=target.today
        ),
    }
    from pipelines.warehouse_assets import WarehouseResource

    # The sandbox has its own clock: booking pace is as of its today, not the wall clock's.
    resources["warehouse"] = WarehouseResource(
        data_dir=str(settings.data_dir.resolve()), as_of=target.today
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
    from service.config import ServiceConfig
    from service.errors import ServiceError, ServiceUnavailable
    from service.sync import run

    try:
        config = ServiceConfig(
            base_url=target.base_url,
            client_id=target.client_id,
            client_secret=target.client_secret,
            scope=target.scope,
            max_concurrency=settings.max_concurrency,
            max_retries=PREFLIGHT_RETRIES,
            max_retry_seconds=PREFLIGHT_TIMEOUT_SECONDS,
            timeout=PREFLIGHT_TIMEOUT_SECONDS,
        )

        async def probe() -> None:
            async with ReservationService.connect(config) as service:
                await service.latest_event_id()

        run(probe())
    except ServiceUnavailable as exc:
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


class ProgressDisplay:
    """Live per-table pages and records while the job runs."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled
        self.lines: dict[str, TableLine] = {}
        self.started = time.monotonic()
        self._live: Live | None = None

    def _render(self) -> Table:
        table = Table(title=f"extracting ({time.monotonic() - self.started:.0f}s)", expand=False)
        for col in ("table", "pages", "records", "quarantined"):
            table.add_column(col, justify="right" if col != "table" else "left")
        for name, line in self.lines.items():
            table.add_row(name, str(line.pages), f"{line.rows:,}", str(line.quarantined))
        return table

    def on_page(self, event: progress.PageEvent) -> None:
        line = self.lines.setdefault(event.table, TableLine())
        if not event.done:
            line.pages += 1
            line.rows += event.records
            line.quarantined += event.quarantined
        if self._live is not None:
            self._live.update(self._render())

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        unsubscribe = progress.subscribe(self.on_page)
        try:
            if self.enabled and self.console.is_terminal:
                with Live(self._render(), console=self.console, refresh_per_second=4) as live:
                    self._live = live
                    yield
                    self._live = None
            else:
                yield
        finally:
            unsubscribe()


def _metadata_value(value: Any) -> Any:
    return getattr(value, "value", value)


def summarise(
    result: dg.ExecuteInProcessResult, instance: dg.DagsterInstance, mode: str, seconds: float
) -> RunSummary:
    """Rows, requests and seconds per lake table and rows per model (from the materializations'
    metadata), and every asset check the run evaluated."""
    summary = RunSummary(run_id=result.run_id, mode=mode, seconds=seconds)
    streams: set[str] = set()
    for entry in instance.all_logs(result.run_id):
        event = entry.dagster_event
        if event is None:
            continue
        if event.event_type_value == "ASSET_CHECK_EVALUATION":
            evaluation = event.event_specific_data
            severity = getattr(evaluation, "severity", dg.AssetCheckSeverity.ERROR)
            outcome = (
                "passed"
                if evaluation.passed  # type: ignore[union-attr]
                else "warned"
                if severity == dg.AssetCheckSeverity.WARN
                else "failed"
            )
            summary.checks.append(
                CheckLine(
                    evaluation.asset_key.to_user_string(),  # type: ignore[union-attr]
                    evaluation.check_name,  # type: ignore[union-attr]
                    outcome,
                )
            )
            continue
        if event.event_type_value != "ASSET_MATERIALIZATION":
            continue
        materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
        key = materialization.asset_key.path
        meta = {k: _metadata_value(v) for k, v in materialization.metadata.items()}
        rows = int(meta.get("dagster/row_count", 0) or 0)
        if key[0] == "lake":
            # A stream's requests sit on each of its tables: show them on the first one.
            stream = str(meta.get("stream", key[-1]))
            requests = 0 if stream in streams else int(meta.get("requests_used", 0) or 0)
            streams.add(stream)
            summary.extra_requests += int(meta.get("run_requests", 0) or 0)
            summary.tables[key[-1]] = TableLine(
                rows=rows,
                quarantined=int(meta.get("quarantined_records", 0) or 0),
                requests=requests,
                seconds=float(meta.get("seconds", 0.0) or 0.0),
            )
        else:
            summary.models[key[-1]] = rows
    return summary


def headline_kpis(warehouse: Path, today: str | None) -> list[tuple[str, str]]:
    """A few numbers that show the warehouse works; empty when the marts are not there."""
    if not warehouse.exists():
        return []
    import duckdb

    try:
        from warehouse.kpis import headline  # type: ignore[import-not-found]
    except ImportError:
        return []
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return headline(con, today)
    except duckdb.Error:
        return []
    finally:
        con.close()


def print_summary(
    console: Console, summary: RunSummary, settings: Settings, target: ServiceTarget
) -> None:
    table = Table(title=f"reservoir {summary.mode} run {summary.run_id[:8]}")
    for col in ("table", "rows", "requests", "seconds", "quarantined"):
        table.add_column(col, justify="left" if col == "table" else "right")
    # Full extracts report requests and seconds per source stream (on its root table); the
    # other modes land every table in one plan, whose totals only the last row can show.
    per_table = any(line.seconds for line in summary.tables.values())
    for name, line in sorted(summary.tables.items()):
        table.add_row(
            name,
            f"{line.rows:,}",
            str(line.requests) if per_table else "",
            f"{line.seconds:.1f}" if per_table else "",
            str(line.quarantined),
        )
    table.add_section()
    total_rows = sum(line.rows for line in summary.tables.values())
    quarantined = sum(line.quarantined for line in summary.tables.values())
    table.add_row(
        "total",
        f"{total_rows:,}",
        str(summary.requests),
        f"{summary.seconds:.1f}",
        str(quarantined),
    )
    console.print(table)
    if summary.models:
        console.print(f"warehouse: {len(summary.models)} models built")
    print_checks(console, summary.checks)
    if summary.kpis:
        kpi = Table(title="headline KPIs", show_header=False)
        for name, value in summary.kpis:
            kpi.add_row(name, value)
        console.print(kpi)
    source = "the embedded sandbox" if target.sandbox is not None else target.base_url
    console.print(
        f"source:     {source}\n"
        f"lake:       {settings.lake_dir.resolve()}\n"
        f'warehouse:  {settings.warehouse_path.resolve()}   (reservoir sql "select * from marts.occupancy_daily limit 5")\n'
        f"dashboard:  reservoir dashboard   -> {(settings.data_dir / 'dashboard.html').resolve()}\n"
        f"Dagster UI: make dev   (http://127.0.0.1:3000, runs recorded in {settings.dagster_home.resolve()})"
    )


def print_checks(console: Console, checks: Sequence[CheckLine]) -> None:
    """One line of counts, then each check that did not pass, by name."""
    if not checks:
        return
    counts = {o: sum(1 for c in checks if c.outcome == o) for o in ("passed", "warned", "failed")}
    console.print(
        f"checks:     {counts['passed']} passed, {counts['warned']} warned, "
        f"{counts['failed']} failed"
    )
    for c in sorted(checks, key=lambda c: (c.outcome != "failed", c.asset, c.name)):
        if c.outcome != "passed":
            console.print(f"  {c.outcome}: {c.asset} {c.name}")


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
) -> dg.ExecuteInProcessResult:
    """Run a job in this process with the command's resources.

    A selection runs as an ad-hoc materialization of the code location's assets: Dagster refuses
    to override the resources of a subset of a job that already binds them.
    """
    if asset_selection is None:
        return job.execute_in_process(
            instance=instance,
            resources=resources,
            raise_on_error=False,
            run_config=run_config,
            tags=tags,
        )
    return dg.materialize(
        [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)],
        selection=asset_selection,
        instance=instance,
        resources=resources,
        raise_on_error=False,
        run_config=run_config,
        tags=tags,
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
            target = stack.enter_context(service_target(settings, scale=scale, seed=seed))
        preflight(settings, target)
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
                tags={"reservoir/mode": run_mode, "reservoir/launched_by": "cli"},
            )
        if not result.success:
            raise RunError(_failure_message(result))
        summary = summarise(result, instance, run_mode, time.monotonic() - started)
        summary.kpis = headline_kpis(settings.warehouse_path, target.today)
        print_summary(console, summary, settings, target)
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
    cursor_dir = settings.lake_dir / "_state" / "event_cursor"
    has_cursor = cursor_dir.exists() and any(cursor_dir.glob("*.parquet"))
    return "incremental_job", "incremental" if has_cursor else "bootstrap"
