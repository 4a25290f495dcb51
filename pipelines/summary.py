"""What a run did, as `reservoir run` shows it: live progress per table while it runs, then
rows, requests, seconds and quarantine per table, the models built, every asset check the run
evaluated, the as-of date (the service's date) and the headline KPIs around it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
from rich.console import Console, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from assets import progress
from assets.refusal import READ_AGAIN
from pipelines.settings import Settings

RUN_LEVEL_ROW = "(read by no table)"  # event feed, reservation-id list, clock probe


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
    # The as-of date of the warehouse and its KPIs (the service's date), described
    as_of: str | None = None

    extra_requests: int = 0  # requests not attributed to a table (event reads, probes)
    checks: list[CheckLine] = field(default_factory=list)
    # optional areas the service refused: stream -> what was not read, why, what to ask for
    refused: dict[str, str] = field(default_factory=dict)
    read_again: list[str] = field(default_factory=list)  # streams back after a refusal

    @property
    def failed_checks(self) -> list[CheckLine]:
        """Checks that failed with error severity: the run exits non-zero."""
        return [c for c in self.checks if c.outcome == "failed"]

    @property
    def requests(self) -> int:
        return sum(t.requests for t in self.tables.values()) + self.extra_requests


class ProgressDisplay:
    """Live per-table pages and records while the job runs."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.console = console
        self.enabled = enabled
        self.lines: dict[str, TableLine] = {}
        self.started = time.monotonic()
        self.waiting_for: str | None = None  # who holds the lake's writer lock we wait for
        self._live: Live | None = None

    @property
    def title(self) -> str:
        elapsed = f"{time.monotonic() - self.started:.0f}s"
        if self.waiting_for is not None:
            return f"waiting for the lake's writer lock ({elapsed}), held by {self.waiting_for}"
        return f"extracting ({elapsed})"

    def render(self) -> RenderableType:
        if self.waiting_for is not None:  # one line: nothing is extracted while waiting
            return Text(self.title)
        table = Table(title=self.title, expand=False)
        for col in ("table", "pages", "records", "quarantined"):
            table.add_column(col, justify="right" if col != "table" else "left")
        for name, line in self.lines.items():
            table.add_row(name, str(line.pages), f"{line.rows:,}", str(line.quarantined))
        return table

    def on_page(self, event: progress.Event) -> None:
        if isinstance(event, progress.WaitEvent):
            self.waiting_for = event.holder
            if self._live is None and self.enabled and event.holder is not None:
                self.console.print(self.title)  # no live display: one line says it
            return
        line = self.lines.setdefault(event.table, TableLine())
        if not event.done:
            line.pages += 1
            line.rows += event.records
            line.quarantined += event.quarantined
        if self._live is not None:
            self._live.refresh()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        unsubscribe = progress.subscribe(self.on_page)
        try:
            if self.enabled and self.console.is_terminal:
                # rendered afresh on every refresh: the clock moves while nothing lands
                with Live(
                    console=self.console, refresh_per_second=4, get_renderable=self.render
                ) as live:
                    self._live = live
                    yield
                    self._live = None
            else:
                yield
        finally:
            unsubscribe()


def _metadata_value(value: Any) -> Any:
    return getattr(value, "value", value)


def summarise(result: dg.ExecuteInProcessResult, mode: str, seconds: float) -> RunSummary:
    """Rows, requests and seconds per lake table and rows per model (from the materializations'
    metadata), and every asset check the run evaluated.

    From the run's events as this process made them (what the instance stored): reading the
    event log back cost a second of CPU for a small run."""
    summary = RunSummary(run_id=result.run_id, mode=mode, seconds=seconds)
    streams: set[str] = set()
    for event in result.all_events:
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
            if meta.get("refused"):
                summary.refused[stream] = str(meta["refused"])
            for note in meta.get("notes") or ():
                if str(note).startswith(READ_AGAIN):
                    summary.read_again.extend(str(note).removeprefix(READ_AGAIN).split(", "))
            summary.tables[key[-1]] = TableLine(
                rows=rows,
                quarantined=int(meta.get("quarantined_records", 0) or 0),
                requests=requests,
                seconds=float(meta.get("seconds", 0.0) or 0.0),
            )
        elif key[0] == "warehouse":  # a model (not the tidy after them, `warehouse_tidy`)
            summary.models[key[-1]] = rows
    return summary


def headline_kpis(warehouse: Path, today: str | None = None) -> list[tuple[str, str]]:
    """A few numbers that show the warehouse works, around `today` (default: the warehouse's
    as-of date, the service's date); empty when the marts are not there."""
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


def print_summary(console: Console, summary: RunSummary, settings: Settings, source: str) -> None:
    table = Table(title=f"reservoir {summary.mode} run {summary.run_id[:8]}")
    for col in ("table", "rows", "requests", "seconds", "quarantined"):
        table.add_column(col, justify="left" if col == "table" else "right")
    # Every mode reports each source stream's requests and seconds (on its first table); what
    # no stream read (the event feed, the reservation-id list) has a row of its own.
    for name, line in sorted(summary.tables.items()):
        table.add_row(
            name, f"{line.rows:,}", str(line.requests), f"{line.seconds:.1f}", str(line.quarantined)
        )
    if summary.extra_requests:
        table.add_row(RUN_LEVEL_ROW, "", str(summary.extra_requests), "", "")
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
    print_refused(console, summary.refused)
    if summary.read_again:
        console.print(
            f"read again: {', '.join(summary.read_again)} answered again after a refusal and "
            "were read in full (every change made meanwhile included)"
        )
    if summary.models:
        console.print(f"warehouse: {len(summary.models)} models built")
    print_checks(console, summary.checks)
    if summary.kpis:
        kpi = Table(title="headline KPIs", show_header=False)
        for name, value in summary.kpis:
            kpi.add_row(name, value)
        console.print(kpi)
    if summary.as_of:
        console.print(f"as of:      {summary.as_of}")
    console.print(
        f"source:     {source}\n"
        f"lake:       {settings.lake_dir.resolve()}\n"
        f'warehouse:  {settings.warehouse_path.resolve()}   (reservoir sql "select * from marts.occupancy_daily limit 5")\n'
        f"dashboard:  reservoir dashboard   -> {(settings.data_dir / 'dashboard.html').resolve()}\n"
        f"Dagster UI: make dev   (http://127.0.0.1:3000, runs recorded in {settings.dagster_home.resolve()})"
    )


def print_refused(console: Console, refused: dict[str, str]) -> None:
    """The optional areas the service refused: one line per stream not read, with what to do."""
    if not refused:
        return
    console.print(
        f"refused:    {len(refused)} stream(s) of optional areas not read (the rest landed):"
    )
    for line in dict.fromkeys(refused[name] for name in sorted(refused)):
        console.print(f"  {line}", soft_wrap=True)


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
