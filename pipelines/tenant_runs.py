"""`reservoir run --tenant NAME` / `--all-tenants`: one run per tenant of the tenants file, then
the group warehouse.

Each tenant is a single-tenant run (`pipelines.runner.run_pipeline`) with its own settings
(`pipelines.tenants.tenant_settings`): its own service, credentials, client, 15-call cap and
request budget, data directory and lake prefix, recorded in the shared Dagster instance with the
run tag `reservoir/tenant`. The tenants run one after another, so one tenant's run never
competes with another's for the machine, and a tenant that fails (wrong credentials, an
unreachable host, a failed check) is reported with its message while the next one runs; what it
committed before failing stays (every commit is atomic per table and idempotent on a rerun).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from rich.console import Console

from pipelines.runner import run_pipeline
from pipelines.settings import Settings
from pipelines.summary import RunSummary
from pipelines.target import RunError, ServiceTarget
from pipelines.tenants import Tenant, tenant_settings
from warehouse.group import GroupResult, build_group


@dataclass
class TenantOutcome:
    """What one tenant's run gave: its summary, or the one-line reason it failed."""

    tenant: str
    settings: Settings
    summary: RunSummary | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class TenantsRun:
    outcomes: list[TenantOutcome]
    group: GroupResult | None = None
    group_error: str | None = None

    @property
    def failed(self) -> list[TenantOutcome]:
        return [o for o in self.outcomes if not o.ok]


@contextlib.contextmanager
def tenant_target(tenant: Tenant, settings: Settings) -> Iterator[ServiceTarget]:
    """The tenant's service, or its embedded sandbox (seed, scale, faults) for the block."""
    if not tenant.uses_sandbox:
        yield ServiceTarget(
            settings.base_url or "",
            settings.client_id or "",
            settings.client_secret or "",
            settings.scope or "",
        )
        return
    from sandbox.runner import SandboxSettings, run_sandbox  # the CLI is the sandbox's starter

    sandbox = SandboxSettings(
        seed=tenant.sandbox_seed, scale=tenant.sandbox_scale, faults=dict(tenant.sandbox_faults)
    )
    with run_sandbox(sandbox) as handle:
        yield ServiceTarget.from_sandbox(handle)


def run_tenants(
    base: Settings,
    tenants: Sequence[Tenant],
    *,
    mode: str = "auto",
    select: Sequence[str] | None = None,
    quiet: bool = False,
    console: Console | None = None,
    targets: Mapping[str, ServiceTarget] | None = None,
    env: Mapping[str, str] | None = None,
    group: Sequence[Tenant] | None = None,
) -> TenantsRun:
    """Run each tenant in turn, then build the group warehouse from the warehouse of every
    tenant of `group` (default: the tenants run; the CLI passes the whole file, so that a run of
    one tenant keeps the others in the group).

    `targets` gives a tenant's service directly (tests and benchmarks that hold the sandbox);
    otherwise the tenants file's service or embedded sandbox is used. Never raises for one
    tenant's failure: the outcome carries its message.
    """
    console = console or Console()
    outcomes: list[TenantOutcome] = []
    for tenant in tenants:
        settings = tenant_settings(base, tenant, env)
        outcome = TenantOutcome(tenant.name, settings)
        outcomes.append(outcome)
        if not quiet:
            console.rule(f"tenant {tenant.name}")
        started = time.monotonic()
        try:
            settings.ensure_data_dir()
            with contextlib.ExitStack() as stack:
                target = (targets or {}).get(tenant.name) or stack.enter_context(
                    tenant_target(tenant, settings)
                )
                outcome.summary = run_pipeline(
                    settings, mode=mode, select=select, quiet=quiet, console=console, target=target
                )
        except RunError as exc:
            outcome.error = str(exc)
        except Exception as exc:  # one tenant's failure never stops the others
            from pipelines.storage_errors import explain_storage_failure

            outcome.error = explain_storage_failure(exc, settings.data_dir) or (
                f"{type(exc).__name__}: {exc}"
            )
        finally:
            outcome.seconds = time.monotonic() - started
            _restore_home(base)
    run = TenantsRun(outcomes)
    try:
        members = group if group is not None else tenants
        run.group = build_group(
            base.data_dir,
            {t.name: tenant_settings(base, t, env).warehouse_path for t in members},
        )
    except Exception as exc:
        run.group_error = f"the group warehouse was not built: {type(exc).__name__}: {exc}"
    return run


def _restore_home(base: Settings) -> None:
    """The shared Dagster home for whatever reads the instance next in this process."""
    os.environ["DAGSTER_HOME"] = str(base.dagster_home.resolve())


def print_tenants_run(console: Console, run: TenantsRun) -> None:
    """One line per tenant (landed or its message), then the group warehouse."""
    console.rule("tenants")
    for o in run.outcomes:
        if o.ok:
            requests = o.summary.requests if o.summary is not None else 0
            console.print(
                f"[green]ok[/]     {o.tenant:16} {o.seconds:7.1f} s  {requests:>7} requests  "
                f"{o.settings.data_dir}"
            )
        else:
            console.print(f"[red]failed[/] {o.tenant:16} {o.seconds:7.1f} s  {o.error}")
    if run.group is not None:
        console.print(
            f"group warehouse: {run.group.path} ({len(run.group.tenants)} tenant(s): "
            f"{', '.join(run.group.tenants) or 'none yet'})"
        )
    elif run.group_error:
        console.print(f"[red]{run.group_error}[/]")
