"""`reservoir status`: where the data stands, without touching the service.

Reads the lake's state (event cursor), the Dagster instance under the data directory (last runs,
requests used today) and the warehouse (row counts), each optional: a fresh checkout says
what is missing and how to create it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

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


def _runs(settings: Settings) -> tuple[list[Any], int]:
    """Last runs and the requests they used today (UTC), from the instance's event log."""
    home = settings.dagster_home.resolve()
    if not (home / "dagster.yaml").exists():
        return [], 0
    import dagster as dg

    os.environ["DAGSTER_HOME"] = str(home)
    instance = dg.DagsterInstance.get()
    records = instance.get_run_records(limit=50)
    today = datetime.now(UTC).date()
    used = 0
    for record in records:
        if datetime.fromtimestamp(record.create_timestamp.timestamp(), UTC).date() != today:
            continue
        for entry in instance.all_logs(
            record.dagster_run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
        ):
            meta = entry.asset_materialization.metadata if entry.asset_materialization else {}
            value = meta.get("requests_used")
            used += int(getattr(value, "value", value) or 0)
    return records[:RUNS_SHOWN], used


def _row_counts(settings: Settings) -> list[tuple[str, int]]:
    if not settings.warehouse_path.exists():
        return []
    import duckdb

    con = duckdb.connect(str(settings.warehouse_path), read_only=True)
    try:
        tables = con.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_schema in ('core', 'marts') and table_type = 'BASE TABLE' order by 1, 2"
        ).fetchall()
        counts = []
        for schema, name in tables:
            ident = f'"{schema}"."{name}"'
            (n,) = con.execute(f"select count(*) from {ident}").fetchone() or (0,)
            counts.append((f"{schema}.{name}", int(n)))
        return counts
    finally:
        con.close()


def print_status(settings: Settings, console: Console | None = None) -> None:
    console = console or Console()
    cursor = _cursor(settings)
    if cursor:
        console.print(
            f"event cursor: eventId {cursor.get('event_id')} at {cursor.get('event_date')}"
        )
    else:
        console.print("event cursor: none yet (the first `reservoir run` takes a full snapshot)")
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
    share = used / DAILY_FREE_REQUESTS
    console.print(f"requests today: {used:,} of {DAILY_FREE_REQUESTS:,} free ({share:.1%})")
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
