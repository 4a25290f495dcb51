"""The entry points: render the page from a connection, write it from a warehouse file."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from pipelines.dashboard.formatting import _day, _e
from pipelines.dashboard.markup import _empty, _section
from pipelines.dashboard.marts import _Ctx, _load_marts, _Unavailable
from pipelines.dashboard.sections import SECTIONS
from pipelines.dashboard.sections.performance import _kpis
from pipelines.dashboard.style import CSS
from warehouse import asof


class DashboardError(Exception):
    """The dashboard cannot be built; the message says what to do."""


def _body(build: Callable[[_Ctx], str], ctx: _Ctx) -> str:
    """A section's body, or what to do when the warehouse lacks a column the section needs."""
    try:
        return build(ctx)
    except _Unavailable as exc:
        return _empty(f"{exc}; rebuild the warehouse with this version.")


def render_dashboard(
    con: duckdb.DuckDBPyConnection, *, today: date, source: str, as_of_note: str = ""
) -> str:
    """The whole page as one string, from an open (read-only) warehouse connection.

    `today` is the page's "today" (the warehouse's as-of date: the service's date, unless
    overridden); `as_of_note` says where it came from."""
    ctx = _Ctx(con, _load_marts(con), today)
    sections = [
        _section(key, title, intro, _body(build, ctx)) for key, title, intro, build in SECTIONS
    ]
    kpis = _body(_kpis, ctx)
    nav = "".join(f'<a href="#{key}">{_e(title)}</a>' for key, title, *_ in SECTIONS)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Reservoir dashboard · {_e(today.isoformat())}</title>"
        f"<style>{CSS}</style></head><body>"
        "<header><h1>Revenue and occupancy</h1>"
        f'<p>As of <time datetime="{today.isoformat()}">{_e(_day(today))}</time>'
        f"{_e(as_of_note)} · built from {_e(source)} · generated {_e(generated)}</p>"
        f'<nav aria-label="Sections">{nav}</nav></header>'
        '<main><section id="kpis" aria-labelledby="kpis-h"><h2 id="kpis-h">Headline figures</h2>'
        '<p class="intro">Occupancy = nights sold / nights available; ADR = room revenue / '
        "nights sold; RevPAR = room revenue / nights available. Money per currency, excluding "
        "VAT unless marked as billed (list prices, booking pace).</p>"
        f"{kpis}</section>{''.join(sections)}</main>"
        "<footer>Figures follow the project's metric definitions: stay nights, on-the-books "
        "statuses, revenue allocated to nights, money kept per currency. Hover any chart "
        "element for its figures.</footer>"
        "</body></html>\n"
    )


def build_dashboard(warehouse_path: Path, out_path: Path, *, today: date | None = None) -> Path:
    """Write the dashboard for `warehouse_path` to `out_path` (atomically) and return it."""
    warehouse_path, out_path = Path(warehouse_path), Path(out_path)
    if not warehouse_path.is_file():
        raise DashboardError(
            f"no warehouse at {warehouse_path}; run `reservoir run` first to build it"
        )
    con = duckdb.connect(str(warehouse_path), read_only=True)
    try:
        note = " (set with --today)"
        if today is None:
            # The warehouse's as-of date: the service's date at the last run, the same "today"
            # as the run summary's KPIs and `reservoir status`; never this machine's date.
            found = asof.read(con)
            if found is None or found.as_of is None:
                raise DashboardError(
                    f"the warehouse at {warehouse_path} records no as-of date; run `reservoir "
                    "run` to rebuild it, or pass --today"
                )
            today, note = found.as_of, f" ({found.source})"
        page = render_dashboard(con, today=today, source=warehouse_path.name, as_of_note=note)
    finally:
        con.close()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    # write beside the target and rename, so a reader never sees half a page
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, out_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out_path
