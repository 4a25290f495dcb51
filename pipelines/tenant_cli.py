"""The tenant side of `reservoir run` and `reservoir status`: which tenants a command means
(`--tenant NAME`, `--all-tenants`, or every tenant when RESERVOIR_TENANTS_FILE is set), their
runs one after another, and the exit that names each tenant that failed with its message."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from pipelines.cli_support import fail
from pipelines.settings import Settings
from pipelines.tenants import (
    TENANTS_ENV,
    Tenant,
    TenantsError,
    load_tenants,
    select_tenants,
    tenant_settings,
    tenants_file,
)


def chosen_tenants(names: Sequence[str] | None, all_tenants: bool) -> list[Tenant] | None:
    """The tenants a command is about; None = the single tenant of the data directory (no
    tenants file and no tenant option). Errors exit with code 2 and what to do."""
    path = tenants_file()
    if path is None:
        if names or all_tenants:
            raise fail(
                f"--tenant and --all-tenants need a tenants file: set {TENANTS_ENV} to its path "
                "(see .env.example)."
            )
        return None
    if names and all_tenants:
        raise fail("give --tenant NAME (repeatable) or --all-tenants, not both.")
    try:
        return select_tenants(load_tenants(path), list(names or []))
    except TenantsError as exc:
        raise fail(str(exc)) from None


def tenants_line() -> str | None:
    """`reservoir settings`' line about the tenants file (checked: raises TenantsError), or
    None without one."""
    path = tenants_file()
    if path is None:
        return None
    names = [t.name for t in load_tenants(path)]
    return f"{len(names)} tenant(s) in {path}: {', '.join(names)}"


def run_command(
    settings: Settings,
    tenants: list[Tenant],
    *,
    mode: str,
    select: Sequence[str] | None,
    quiet: bool,
) -> None:
    """Run the tenants, print one line each and the group warehouse; exit 1 naming each
    tenant that failed, with its message."""
    from pipelines.tenant_runs import print_tenants_run, run_tenants

    console = Console()
    path = tenants_file()
    everyone = load_tenants(path) if path is not None else tenants  # checked by chosen_tenants
    run = run_tenants(
        settings, tenants, mode=mode, select=select, quiet=quiet, console=console, group=everyone
    )
    print_tenants_run(console, run)
    problems = [f"tenant {o.tenant}: {o.error}" for o in run.failed]
    if run.group_error:
        problems.append(run.group_error)
    if problems:
        landed = len(run.outcomes) - len(run.failed)
        raise fail(
            f"{len(run.failed)} of {len(run.outcomes)} tenant(s) failed ({landed} landed): "
            + "; ".join(problems),
            code=1,
        )


def status_command(settings: Settings, tenants: list[Tenant]) -> None:
    """`reservoir status` of each tenant, under its name (a Dagster instance opened once for the
    tenants that share it)."""
    from pipelines.status import open_instance, print_status

    console = Console()
    with contextlib.ExitStack() as stack:
        instances: dict[Path, Any] = {}
        for tenant in tenants:
            own = tenant_settings(settings, tenant)
            home = own.dagster_home.resolve()
            if home not in instances:
                instances[home] = stack.enter_context(open_instance(own))
            console.rule(f"tenant {tenant.name}")
            print_status(own, console, instances[home])
