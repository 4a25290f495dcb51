"""The entry points: read the page's figures from a warehouse file, render the page, write the
offline snapshot (`reservoir dashboard`)."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import duckdb

from pipelines.dashboard.areas import load_areas
from pipelines.dashboard.page import Mode, render
from pipelines.dashboard.scripts import inline_tags
from pipelines.dashboard.views import Filters, load
from warehouse import asof


class DashboardError(Exception):
    """The dashboard cannot be built; the message says what to do."""


def open_warehouse(warehouse_path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection: it never blocks a build, which publishes a new file by rename."""
    if not Path(warehouse_path).is_file():
        raise DashboardError(
            f"no warehouse at {warehouse_path}; run `reservoir run` first to build it"
        )
    return duckdb.connect(str(warehouse_path), read_only=True)


def as_of(con: duckdb.DuckDBPyConnection, today: date | None, where: str) -> tuple[date, str]:
    """The page's "today": `today` when given, else the warehouse's as-of date (the service's
    date at the last run, never this machine's), with a note of where it came from."""
    if today is not None:
        return today, " (set with --today)"
    found = asof.read(con)
    if found is None or found.as_of is None:
        raise DashboardError(
            f"the warehouse at {where} records no as-of date; run `reservoir run` to rebuild it, "
            "or pass --today"
        )
    return found.as_of, f" ({found.source})"


def render_dashboard(
    con: duckdb.DuckDBPyConnection,
    filters: Filters,
    *,
    source: str,
    as_of_note: str = "",
    mode: Mode = "snapshot",
    scripts: str | None = None,
) -> str:
    """The whole page for `filters` from an open read-only connection."""
    try:
        data = load(con, filters)
        areas = load_areas(con, filters)
    except duckdb.CatalogException as exc:
        raise DashboardError(
            f"the warehouse lacks a mart this page reads ({str(exc).splitlines()[0]}); run "
            "`reservoir run` to rebuild it with this version"
        ) from None
    return render(
        data,
        mode=mode,
        source=source,
        as_of_note=as_of_note,
        scripts=inline_tags() if scripts is None else scripts,
        areas=areas,
    )


def build_dashboard(warehouse_path: Path, out_path: Path, *, today: date | None = None) -> Path:
    """Write the offline snapshot for `warehouse_path` to `out_path` (atomically)."""
    warehouse_path, out_path = Path(warehouse_path), Path(out_path)
    con = open_warehouse(warehouse_path)
    try:
        ref, note = as_of(con, today, str(warehouse_path))
        page = render_dashboard(
            con, Filters.default(ref), source=warehouse_path.name, as_of_note=note
        )
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
