"""`reservoir status`: where the data stands, without touching the service.

Reads the lake's state (event cursor, the as-of date: the service's date at the last run), the
Dagster instance under the data directory (last runs, requests used today) and the warehouse
(its as-of date, row counts), each optional: a fresh checkout says what is missing and how to
create it. "Requests used today" counts this machine's UTC day: the request quota is real time.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime, time
from typing import Any

from rich.console import Console
from rich.table import Table

from pipelines.run_requests import REQUESTS_TAG, requests_in
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


@contextlib.contextmanager
def open_instance(settings: Settings, instance: Any = None) -> Iterator[Any]:
    """The Dagster instance under the data directory (None when no run made one), opened once
    for all a command reads of it (each opening costs ~0.25 s), or `instance` when given."""
    if instance is not None:
        yield instance
        return
    home = settings.dagster_home.resolve()
    if not (home / "dagster.yaml").exists():
        yield None
        return
    import dagster as dg

    os.environ["DAGSTER_HOME"] = str(home)
    with dg.DagsterInstance.get() as opened:
        yield opened


def _runs(settings: Settings, instance: Any = None) -> tuple[list[Any], int]:
    """Last runs and the requests every run created today (UTC) used, from their records."""
    with open_instance(settings, instance) as opened:
        if opened is None:
            return [], 0
        import dagster as dg

        from pipelines.partitions import PARTITION_TAG

        # A tenant's runs only (the tenants share the instance): those of its partition,
        # launched by the CLI, a sensor, the schedule or the UI (pipelines/partitions.py).
        tags = {PARTITION_TAG: settings.tenant} if settings.tenant else {}
        shown = opened.get_run_records(filters=dg.RunsFilter(tags=tags), limit=RUNS_SHOWN)
        midnight = datetime.combine(datetime.now(UTC).date(), time.min, UTC)
        today = opened.get_run_records(filters=dg.RunsFilter(tags=tags, created_after=midnight))
        return shown, sum(_requests(opened, record.dagster_run) for record in today)


def _requests(instance: Any, run: Any) -> int:
    """The requests a run sent: its tag, written by its lake step; 0 for a run without the lake;
    else (a run recorded before the tag, or one whose lake step failed) from its lake
    materializations."""
    tagged = run.tags.get(REQUESTS_TAG)
    if tagged is not None:
        return int(tagged)
    selection = run.asset_selection
    if selection and not any(key.path[0] == "lake" for key in selection):  # empty: the job
        return 0
    import dagster as dg

    metadata = []
    for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
        materialization = entry.asset_materialization
        if materialization is None or materialization.asset_key.path[0] != "lake":
            continue
        metadata.append({k: getattr(v, "value", v) for k, v in materialization.metadata.items()})
    return requests_in(metadata)


def requests_used_today(settings: Settings) -> int:
    """Requests the runs recorded under the data directory sent today (UTC)."""
    return _runs(settings)[1]


def _checks(settings: Settings, instance: Any = None) -> list[tuple[str, str, str, str]]:
    """(asset, check, outcome, run) of the latest evaluation of every check the code location
    defines for this tenant's partition (`default` for the single tenant); outcome `not run
    yet` for a check never evaluated there."""
    with open_instance(settings, instance) as opened:
        return [] if opened is None else _latest_checks(settings, opened)


def _latest_checks(settings: Settings, instance: Any) -> list[tuple[str, str, str, str]]:
    import dagster as dg

    # Dagster exports no public name for the filter of a check's partition.
    from dagster._core.event_api import PartitionKeyFilter

    from pipelines.asset_keys import defined_check_keys
    from pipelines.partitions import DEFAULT_TENANT

    keys = sorted(defined_check_keys(), key=lambda k: (k.asset_key.to_user_string(), k.name))
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


def print_status(settings: Settings, console: Console | None = None, instance: Any = None) -> None:
    """What `reservoir status` prints; `instance` the Dagster instance when the caller opened it
    (the tenants of one instance), else it is opened once here."""
    with open_instance(settings, instance) as opened:
        _print_status(settings, console or Console(), opened)


def _print_status(settings: Settings, console: Console, instance: Any) -> None:
    from warehouse.asof import current_as_of

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
    records, used = _runs(settings, instance) if instance is not None else ([], 0)
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
    checks = _latest_checks(settings, instance) if instance is not None else []
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
