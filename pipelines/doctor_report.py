"""How `reservoir doctor` shows its findings: rich tables for people, JSON for machines.

Neither ever contains the client secret or a token: the report holds none (only the client id,
the scope and the service's own error messages, which the client scrubs of secrets).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipelines.doctor import DoctorReport
from pipelines.doctor_probe import EndpointProbe


def as_json(report: DoctorReport) -> str:
    data: dict[str, Any] = {"ok": report.ok, **dataclasses.asdict(report)}
    return json.dumps(data, indent=2, default=str)


def _http(probe: EndpointProbe) -> str:
    if probe.skipped:
        return "-"
    return str(probe.status) if probe.status is not None else "none"


def _reachable(probe: EndpointProbe) -> str:
    if probe.reachable is None:
        return "not asked"
    return "yes" if probe.reachable else "[red]no[/red]"


def _accepts(probe: EndpointProbe) -> str:
    lines = [
        _marked(f"{name} {verdict}", verdict == "accepted")
        for name, verdict in probe.sections.items()
    ]
    lines += [
        _marked(f"{name} {verdict}", verdict == "ok") for name, verdict in probe.filters.items()
    ]
    if probe.problem:
        lines.append(_marked(probe.problem, False))
    elif probe.skipped:
        lines.append(escape(probe.skipped))
    elif probe.records == 0:
        lines.append("no records to test filters on")
    return "\n".join(lines + [escape(n) for n in probe.notes]) or "-"


def _marked(text: str, good: bool) -> str:
    return escape(text) if good else f"[red]{escape(text)}[/red]"


def _page_size(probe: EndpointProbe) -> str:
    if probe.page_size_asked is None:
        return "-"
    if probe.page_size is None:
        return f"not reported (asked {probe.page_size_asked})"
    if probe.page_size < probe.page_size_asked:
        return f"[yellow]{probe.page_size}[/yellow] of {probe.page_size_asked} asked"
    return f"{probe.page_size} of {probe.page_size_asked} asked"


def print_report(console: Console, report: DoctorReport) -> None:
    say = functools.partial(console.print, soft_wrap=True)  # long lines stay whole
    say(f"service:        {escape(report.service)}")
    say(f"client id:      {escape(report.client_id)}   scope: {escape(report.scope or '-')}")
    if not report.authenticated:
        say(f"[red]authentication: failed[/red] - {escape(report.authentication)}")
    else:
        say(f"authentication: ok ({escape(report.authentication)})")
    if report.endpoints:
        table = Table(title="endpoints the pipeline reads (smallest requests)")
        table.add_column("endpoint", no_wrap=True)
        for column in ("reachable", "HTTP", "sections and filters", "page size"):
            table.add_column(column)
        table.add_column("latency", justify="right")
        for probe in report.endpoints:
            latency = f"{probe.latency_ms:.0f} ms" if probe.latency_ms is not None else "-"
            table.add_row(
                escape(probe.endpoint),
                _reachable(probe),
                _http(probe),
                _accepts(probe),
                _page_size(probe),
                latency,
            )
        console.print(table)
    if report.tables:
        table = Table(title="lake tables that will be empty or degraded")
        for column in ("table", "will be", "why", "blocks"):
            table.add_column(column)
        for outlook in report.tables:
            mark = "[red]yes[/red]" if outlook.blocking else "no"
            table.add_row(outlook.table, outlook.outlook, escape(outlook.why), mark)
        console.print(table)
    elif report.authenticated:
        say("lake tables:    every table can be filled")
    for area, line in report.refused_areas.items():
        say(f"[yellow]warning[/yellow]: optional area {escape(area)}: {escape(line)}")
    if report.budget:
        say(_budget_line(report.budget))
    if report.ok and report.refused_areas:
        areas = ", ".join(report.refused_areas)
        say(
            f"[green]ready[/green], with warnings: the optional area(s) {escape(areas)} will not "
            "be read; everything else works (exit code 0)"
        )
    elif report.ok:
        say("[green]ready[/green]: everything the pipeline needs works (exit code 0)")
    else:
        blocking = sum(1 for t in report.tables if t.blocking)
        why = (
            "authentication failed" if not report.authenticated else f"{blocking} table(s) blocked"
        )
        say(f"[red]not ready[/red]: {why} (exit code 1)")


def _budget_line(budget: dict[str, Any]) -> str:
    free, left = budget["daily_free"], budget["free_left_today"]
    per_run = budget["max_requests_per_run"]
    line = (
        f"requests today: {budget['used_today_by_runs']:,} by runs + {budget['used_by_doctor']} "
        f"by this check of {free:,} free; {left:,} left. One run may send "
        + (f"{per_run:,} (RESERVOIR_MAX_REQUESTS)" if per_run else "any number (no limit set)")
    )
    if not budget["charged"]:
        return line + "; the sandbox charges nothing."
    if per_run == 0 or per_run > left:
        return line + "; [yellow]a full run may pass the free quota (charged)[/yellow]."
    return line + "."
