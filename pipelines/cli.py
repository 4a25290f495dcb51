"""The `reservoir` command line: run the pipeline, start the sandbox, receive webhooks, look.

Every command reads its settings at call time and reports a bad setting as one line that says
what to do (exit code 2), never as a traceback.
"""

from __future__ import annotations

import contextlib
import sys
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from pipelines.cli_support import built_warehouse
from pipelines.cli_support import fail as _fail
from pipelines.cli_support import load_settings as _settings
from pipelines.sandbox_cli import sandbox_advance, sandbox_serve
from pipelines.serve.cli import export_command, serve_command
from pipelines.settings import (
    ENV_FILE,
    ENV_VARS,
    Settings,
    SettingsError,
    load_env_file,
    shown_value,
)

app = typer.Typer(
    name="reservoir",
    help="Reservation-service data pipeline: extract to Parquet, model revenue and occupancy "
    "in DuckDB. Settings come from RESERVOIR_* environment variables (see .env.example); with "
    "RESERVOIR_BASE_URL unset, commands use the embedded sandbox.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
sandbox_app = typer.Typer(
    help="The embedded sandbox: a simulated reservation service.", no_args_is_help=True
)
webhooks_app = typer.Typer(
    help="Receive the service's signed webhook pushes.", no_args_is_help=True
)
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(webhooks_app, name="webhooks")
_FROM_ENV_FILE: dict[str, str] = {}  # settings that `.env` supplied to this command


@app.callback()
def _load_env_file() -> None:
    """Settings come from the environment, then `.env` in the working directory, then defaults."""
    _FROM_ENV_FILE.update(load_env_file())


@app.command()
def run(
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            "-m",
            help="auto (default): the first run bootstraps (event high-water mark, full snapshot, cursor), later runs apply the event feed since the cursor; incremental: the same; full: a complete snapshot that leaves the cursor alone.",
        ),
    ] = "auto",
    select: Annotated[
        list[str] | None,
        typer.Option(
            "--select",
            "-s",
            help="Lake tables or warehouse models to run (repeatable), e.g. -s reservations -s occupancy_daily.",
        ),
    ] = None,
    scale: Annotated[
        str,
        typer.Option(
            help="Sandbox scale when RESERVOIR_BASE_URL is unset: small, medium or large."
        ),
    ] = "small",
    seed: Annotated[int, typer.Option(help="Sandbox seed when RESERVOIR_BASE_URL is unset.")] = 7,
    profile: Annotated[
        str,
        typer.Option(
            help="Sandbox profile when RESERVOIR_BASE_URL is unset: default, or strict (like the real service where its notes speak; docs/sandbox.md)."
        ),
    ] = "default",
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress display, only the summary.")
    ] = False,
    tenant: Annotated[
        list[str] | None,
        typer.Option(help="Run this tenant of RESERVOIR_TENANTS_FILE (repeatable)."),
    ] = None,
    all_tenants: Annotated[
        bool, typer.Option("--all-tenants", help="Run every tenant (the default with a file).")
    ] = False,
) -> None:
    """Extract every source area into the lake and build the warehouse, then print a summary."""
    from pipelines.target import (
        RunError,
        configured_target,
        preflight,
        quiet_retries,
        service_target,
    )
    from pipelines.tenant_cli import chosen_tenants, run_command

    settings = _settings()
    if mode not in {"auto", "full", "incremental"}:
        raise _fail(f"--mode must be auto, full or incremental, got {mode!r}")
    if profile not in {"default", "strict"}:
        raise _fail(f"--profile must be default or strict, got {profile!r}")
    tenants = chosen_tenants(tenant, all_tenants)
    if tenants is not None:
        return run_command(settings, tenants, mode=mode, select=select, quiet=quiet)
    try:
        with contextlib.ExitStack() as stack:
            # A configured service is checked before Dagster and the code location are imported
            # (seconds): a bad credential or URL is one line in about a second. The embedded
            # sandbox starts first instead: its world generates while they are imported.
            target = configured_target(settings)
            checked = target is not None
            if target is not None:
                quiet_retries()
                preflight(settings, target)
            else:
                target = stack.enter_context(
                    service_target(settings, scale=scale, seed=seed, profile=profile, wait=False)
                )
            from pipelines.runner import run_pipeline

            run_pipeline(
                settings,
                mode=mode,
                select=select or None,
                scale=scale,
                seed=seed,
                quiet=quiet,
                profile=profile,
                target=target,
                checked=checked,
            )
    except RunError as exc:
        raise _fail(str(exc), code=1) from None
    except Exception as exc:
        from pipelines.storage_errors import explain_storage_failure

        reason = explain_storage_failure(exc, settings.data_dir)
        if reason is None:
            raise
        raise _fail(reason, code=1) from None


@app.command()
def doctor(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the findings as JSON (for machines).")
    ] = False,
) -> None:
    """Check the service before a run: authentication, every endpoint the pipeline reads (the
    smallest requests), accepted sections and filters, page-size cap, latency, the lake tables
    that would be empty or degraded, today's request budget. Exit code 0 when everything the
    pipeline needs works, 1 otherwise."""
    from rich.console import Console

    from pipelines.doctor import diagnose
    from pipelines.doctor_report import as_json as report_json
    from pipelines.doctor_report import print_report

    report = diagnose(_settings())
    if as_json:
        typer.echo(report_json(report))
    else:
        print_report(Console(), report)
    raise typer.Exit(0 if report.ok else 1)


@app.command()
def status(
    tenant: Annotated[
        list[str] | None, typer.Option(help="Only this tenant (repeatable); default: all.")
    ] = None,
) -> None:
    """Show the as-of date (the service's), the event cursor, the last runs, row counts and
    requests used today (per tenant with RESERVOIR_TENANTS_FILE)."""
    from pipelines.status import print_status
    from pipelines.tenant_cli import chosen_tenants, status_command

    tenants = chosen_tenants(tenant, False)
    if tenants is not None:
        return status_command(_settings(), tenants)
    print_status(_settings())


@app.command()
def sql(
    query: Annotated[
        str | None,
        typer.Argument(help="A query to run; without it, an interactive read-only shell."),
    ] = None,
    output: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="Output: table (wraps on a terminal), csv, json or markdown."
        ),
    ] = "table",
) -> None:
    """Query the warehouse (read-only): one query, or an interactive shell (.help inside)."""
    from pipelines.sqlformat import FORMATS
    from pipelines.sqlshell import HISTORY_FILE, run_sql

    settings = _settings()
    if output not in FORMATS:
        raise _fail(f"--format must be one of {', '.join(FORMATS)}, got {output!r}")
    warehouse = built_warehouse(settings)
    history = settings.data_dir / HISTORY_FILE
    sys.exit(run_sql(warehouse, query, fmt=output, history=history))


@app.command()
def catalog(
    name: Annotated[
        str | None,
        typer.Argument(help="A model (revenue_daily, core.fct_stay_nights) or lake.<table>."),
    ] = None,
) -> None:
    """What the warehouse and the lake hold: every mart with its grain, or one model's or lake
    table's columns with their types and descriptions (works before any run)."""
    from pipelines.catalog_view import UnknownName, print_catalog

    try:
        print_catalog(name)
    except UnknownName as exc:
        raise _fail(str(exc)) from None


@app.command()
def dashboard(
    out: Annotated[
        Path | None,
        typer.Option(help="Where to write the HTML (default: <data dir>/dashboard.html)."),
    ] = None,
    today: Annotated[
        str | None,
        typer.Option(
            help="Reference date YYYY-MM-DD for the KPI tiles (default: the warehouse's as-of "
            "date, the service's date at the last run)."
        ),
    ] = None,
) -> None:
    """Write a self-contained HTML dashboard from the marts."""
    from pipelines.dashboard import DashboardError, build_dashboard

    settings = _settings()
    warehouse = built_warehouse(settings)
    try:
        ref = date.fromisoformat(today) if today else None
    except ValueError:
        raise _fail(f"--today must be a date like 2026-11-21, got {today!r}") from None
    try:
        path = build_dashboard(warehouse, out or settings.data_dir / "dashboard.html", today=ref)
    except DashboardError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"dashboard written to {path}")


app.command("serve")(serve_command)
app.command("export")(export_command)


@app.command()
def dev(
    port: Annotated[int, typer.Option(help="Port of the Dagster UI.")] = 3000,
    scale: Annotated[
        str, typer.Option(help="Sandbox scale when RESERVOIR_BASE_URL is unset.")
    ] = "small",
    seed: Annotated[int, typer.Option(help="Sandbox seed when RESERVOIR_BASE_URL is unset.")] = 7,
) -> None:
    """Open the Dagster UI on this project (with the embedded sandbox when no service is set)."""
    from pipelines.devserver import run_dev

    sys.exit(run_dev(_settings(), port=port, scale=scale, seed=seed))


@app.command()
def settings() -> None:
    """List the settings, where each comes from (environment, .env, default) and check them."""
    import os

    from pipelines.tenant_cli import tenants_line

    typer.echo(f"{'setting':30} {'value':38} {'from':12} meaning")
    for name, meaning in ENV_VARS.items():
        value = os.environ.get(name, "")
        shown = shown_value(name, value)
        source = ENV_FILE if name in _FROM_ENV_FILE else "environment" if value else "default"
        typer.echo(f"{name:30} {shown:38} {source:12} {meaning}")
    try:
        Settings.from_env()
        tenants = tenants_line()  # the tenants file, when RESERVOIR_TENANTS_FILE names one
    except SettingsError as exc:
        raise _fail(f"not valid: {exc}") from None
    typer.echo(tenants or "one tenant (RESERVOIR_TENANTS_FILE is unset)")
    typer.echo("settings are valid (precedence: environment, then .env, then defaults)")


sandbox_app.command("serve")(sandbox_serve)
sandbox_app.command("advance")(sandbox_advance)


@webhooks_app.command("serve")
def webhooks_serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8766,
    body_only_hmac: Annotated[
        bool, typer.Option(help="Accept senders that sign only the body (no id/timestamp).")
    ] = False,
) -> None:
    """Receive reservation webhooks, verify their signatures and store them durably."""
    from pipelines.webhook_server import serve_webhooks

    settings = _settings()
    if not settings.webhook_secret:
        raise _fail(
            "RESERVOIR_WEBHOOK_SECRET is not set: set it to the secret configured for the webhook (whsec_...)."
        )
    try:
        serve_webhooks(
            host=host,
            port=port,
            secret=settings.webhook_secret,
            data_dir=settings.data_dir,
            body_only_hmac=body_only_hmac,
        )
    except ValueError as exc:  # a malformed secret; the message never contains it
        raise _fail(f"RESERVOIR_WEBHOOK_SECRET is not usable: {exc}") from None


def main() -> None:  # the console entry (`reservoir`)
    """Run the command, then end the process without the interpreter's teardown
    (`pipelines.cli_support.exit_now`); an exception that escapes the command ends it as usual."""
    from pipelines.cli_support import exit_now

    try:
        app()
    except SystemExit as done:  # how click ends every command, with its exit code
        exit_now(done.code)
    exit_now(0)


if __name__ == "__main__":  # pragma: no cover
    main()
