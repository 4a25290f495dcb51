"""`reservoir status`: where the data stands, without touching the service.

Reads the lake's state (event cursor, the as-of date: the service's date at the last run), the
Dagster instance under the data directory (last runs, requests used today) and the warehouse
(its as-of date, row counts), each optional: a fresh checkout says what is missing and how to
create it. "Requests used today" counts this machine's UTC day: the request quota is real time.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from pipelines.lake_metadata import requests_in
from pipelines.settings import Settings

DAILY_FREE_REQUESTS = 25_000
RUNS_SHOWN = 5


def _cursor(settings: Settings) -> dict[str, Any] | None:
    from lake.store import Lake

    lake = Lake(settings.lake_dir)
    try:
        return lake.read_state("event_cursor")
    except Exception:  # an unreadable state file is reported, not fatal for status
        return None


def _refused(settings: Settings) -> list[str]:
    """One line per optional area the service refused and no run has read since
    (docs/areas.md): its streams, since when, and what to ask for."""
    from lake.state import refused_streams
    from lake.store import Lake

    try:
        streams = refused_streams(Lake(settings.lake_dir))
    except Exception:  # an unreadable state file is reported, not fatal for status
        return []
    areas: dict[str, list[dict[str, Any]]] = {}
    for item in streams:
        areas.setdefault(str(item.get("area")), []).append(item)
    return [
        f"refused area: {area} ({', '.join(str(i.get('stream')) for i in items)}) since batch "
        f"{items[0].get('since')}: {items[0].get('what_to_do')}; the lake keeps its last records"
        for area, items in areas.items()
    ]


def _runs(settings: Settings) -> tuple[list[Any], int]:
    """Last runs and the requests they used today (UTC), from the instance's event log."""
    home = settings.dagster_home.resolve()
    if not (home / "dagster.yaml").exists():
        return [], 0
    import dagster as dg

    os.environ["DAGSTER_HOME"] = str(home)
    instance = dg.DagsterInstance.get()
    from pipelines.partitions import PARTITION_TAG

    # A tenant's runs only (the tenants share the instance): those of its partition, launched
    # by the CLI, a sensor, the schedule or the UI (pipelines/partitions.py).
    only = dg.RunsFilter(tags={PARTITION_TAG: settings.tenant}) if settings.tenant else None
    records = instance.get_run_records(filters=only, limit=50)
    today = datetime.now(UTC).date()
    used = 0
    for record in records:
        if datetime.fromtimestamp(record.create_timestamp.timestamp(), UTC).date() != today:
            continue
        metadata = []
        for entry in instance.all_logs(
            record.dagster_run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
        ):
            materialization = entry.asset_materialization
            if materialization is None or materialization.asset_key.path[0] != "lake":
                continue
            metadata.append(
                {k: getattr(v, "value", v) for k, v in materialization.metadata.items()}
            )
        used += requests_in(metadata)
    return records[:RUNS_SHOWN], used


def requests_used_today(settings: Settings) -> int:
    """Requests the runs recorded under the data directory sent today (UTC)."""
    return _runs(settings)[1]


def _checks(settings: Settings) -> list[tuple[str, str, str, str]]:
    """(asset, check, outcome, run) of the latest evaluation of every check the code location
    defines for this tenant's partition (`default` for the single tenant); outcome `not run
    yet` for a check never evaluated there."""
    home = settings.dagster_home.resolve()
    if not (home / "dagster.yaml").exists():
        return []
    import dagster as dg

    # Dagster exports no public name for the filter of a check's partition.
    from dagster._core.event_api import PartitionKeyFilter

    from pipelines.definitions import defs
    from pipelines.partitions import DEFAULT_TENANT

    os.environ["DAGSTER_HOME"] = str(home)
    instance = dg.DagsterInstance.get()
    keys = sorted(
        (k for a in defs.get_repository_def().asset_graph.assets_defs for k in a.check_keys),
        key=lambda k: (k.asset_key.to_user_string(), k.name),
    )
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        keys, partition_filter=PartitionKeyFilter(key=settings.tenant or DEFAULT_TENANT)
    )
    out = []
    for key in keys:
        record = latest.get(key)
        evaluation = record.event.asset_check_evaluation if record and record.event else None
        if evaluation is None:
            outcome, run = "not run yet", ""
        else:
            severity = evaluation.severity
            outcome = (
                "passed"
                if evaluation.passed
                else "warned"
                if severity == dg.AssetCheckSeverity.WARN
                else "failed"
            )
            run = record.run_id[:8]
        out.append((key.asset_key.to_user_string(), key.name, outcome, run))
    return out


def _row_counts(settings: Settings) -> list[tuple[str, int]]:
    """Each published table's rows, and each published view's (marked: a view stores no rows of
    its own, e.g. `marts.allotment_pickup` over `core.fct_allotment_pickup_weeks`)."""
    if not settings.warehouse_path.exists():
        return []
    import duckdb

    con = duckdb.connect(str(settings.warehouse_path), read_only=True)
    try:
        tables = con.execute(
            "select table_schema, table_name, table_type = 'VIEW' from information_schema.tables "
            "where table_schema in ('core', 'marts') order by 1, 2"
        ).fetchall()
        counts = []
        for schema, name, is_view in tables:
            ident = f'"{schema}"."{name}"'
            (n,) = con.execute(f"select count(*) from {ident}").fetchone() or (0,)
            counts.append((f"{schema}.{name}{' (view)' if is_view else ''}", int(n)))
        return counts
    finally:
        con.close()


def _inbox_line(settings: Settings) -> str:
    """The webhook inbox: pending pushes (and the oldest), processed ones; never creates it."""
    from pipelines.webhook_inbox import INBOX_DIR_NAME, INBOX_FILE_NAME, WebhookInbox

    if not (settings.data_dir / INBOX_DIR_NAME / INBOX_FILE_NAME).exists():
        return "webhook inbox: none (`reservoir webhooks serve` receives pushes into it)"
    inbox = WebhookInbox(settings.data_dir)
    counts = inbox.counts()
    line = f"webhook inbox: {counts['pending']:,} pending, {counts['processed']:,} processed"
    oldest = inbox.pending(limit=1)
    if oldest:
        line += (
            f"; oldest pending received {oldest[0].received_at:%Y-%m-%d %H:%M} UTC "
            "(the webhook sensor refreshes them)"
        )
    return line


def print_status(settings: Settings, console: Console | None = None) -> None:
    from warehouse.asof import current_as_of

    console = console or Console()
    as_of = current_as_of(settings.warehouse_path, settings.lake_dir)
    console.print(f"as of: {as_of}" if as_of else "as of: no run yet (the service's date then)")
    cursor = _cursor(settings)
    if cursor:
        console.print(
            f"event cursor: eventId {cursor.get('event_id')} at {cursor.get('event_date')}"
        )
    else:
        console.print("event cursor: none yet (the first `reservoir run` takes a full snapshot)")
    for line in _refused(settings):
        console.print(line, soft_wrap=True)
    records, used = _runs(settings)
    if records:
        runs = Table(title="last runs")
        for col in ("run", "job", "status", "started (UTC)", "mode"):
            runs.add_column(col)
        for record in records:
            run = record.dagster_run
            runs.add_row(
                run.run_id[:8],
                run.job_name,
                run.status.value,
                record.create_timestamp.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
                run.tags.get("reservoir/mode", ""),
            )
        console.print(runs)
    else:
        console.print("runs: none recorded yet (`reservoir run` or `make dev`)")
    checks = _checks(settings)
    if checks:
        counts_by = {o: sum(1 for c in checks if c[2] == o) for o in ("passed", "warned", "failed")}
        console.print(
            f"checks (latest evaluation): {counts_by['passed']} passed, {counts_by['warned']} "
            f"warned, {counts_by['failed']} failed"
            + (
                f", {not_run} not run yet"
                if (not_run := len(checks) - sum(counts_by.values()))
                else ""
            )
        )
        table = Table(title="checks that did not pass")
        for col in ("asset", "check", "outcome", "run"):
            table.add_column(col)
        for row in checks:
            if row[2] != "passed":
                table.add_row(*row)
        if table.row_count:
            console.print(table)
    share = used / DAILY_FREE_REQUESTS
    console.print(f"requests today: {used:,} of {DAILY_FREE_REQUESTS:,} free ({share:.1%})")
    console.print(_inbox_line(settings))
    counts = _row_counts(settings)
    if counts:
        table = Table(title=f"warehouse {settings.warehouse_path}")
        table.add_column("table")
        table.add_column("rows", justify="right")
        for name, n in counts:
            table.add_row(name, f"{n:,}")
        console.print(table)
    else:
        console.print(f"warehouse: none at {settings.warehouse_path} (`reservoir run` builds it)")
