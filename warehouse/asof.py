"""The warehouse's as-of date: the service's date at the last lake run, kept in `meta`.

`meta.build_settings` holds it (`as_of`, with `as_of_source` and the service's `service_time`
it was read from). Booking pace counts from it, and the headline KPIs, the dashboard, the run
summary and `reservoir status` all show it, so every figure has one "today": the service's.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import duckdb

from lake.state import read_as_of
from lake.store import Lake

NO_RUN_STATE = "the newest extraction in the lake (no run recorded a date)"


@dataclass(frozen=True)
class WarehouseAsOf:
    """The as-of date of a build and where it came from."""

    as_of: date | None  # None only for an empty lake no run recorded a date in
    source: str = "override"
    service_time: datetime | None = None

    def describe(self) -> str:
        when = f" at {self.service_time:%Y-%m-%d %H:%M} UTC" if self.service_time else ""
        day = self.as_of.isoformat() if self.as_of else "no date"
        return f"{day} ({self.source}{when})"


def from_lake(lake_dir: Path) -> WarehouseAsOf | None:
    """The date the lake's newest run recorded (`lake.state.read_as_of`); None without one."""
    recorded = read_as_of(Lake(lake_dir))
    if recorded is None:
        return None
    return WarehouseAsOf(recorded.business_date, recorded.source, recorded.service_time)


def read(con: duckdb.DuckDBPyConnection) -> WarehouseAsOf | None:
    """The as-of date of the build `con` is connected to; None when it has none."""
    try:
        row = con.execute(
            "select as_of, as_of_source, service_time from meta.build_settings"
        ).fetchone()
    except duckdb.Error:  # no meta table, or one written before the source columns existed
        try:
            row = con.execute("select as_of, null, null from meta.build_settings").fetchone()
        except duckdb.Error:
            return None
    if not row or row[0] is None:
        return None
    return WarehouseAsOf(row[0], row[1] or "override", row[2])


def published(path: Path) -> WarehouseAsOf | None:
    """The as-of date of the published warehouse file; None when missing or without one."""
    if not Path(path).exists():
        return None
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return None
    try:
        return read(con)
    finally:
        con.close()


def current_as_of(warehouse_path: Path, lake_dir: Path) -> str | None:
    """`2026-11-04 (the service's Date header at ...)`: the published warehouse's as-of date,
    else the date the lake's newest run recorded; None before the first run. What the run
    summary and `reservoir status` show."""
    found = published(warehouse_path) or from_lake(lake_dir)
    return found.describe() if found is not None else None


# the settings the stored tables were built with, kept for the refresh that moves them (a temp
# table: a header's query for a moved as-of date may read the date it moved from)
PREVIOUS_SETTINGS = "build_settings_before"


def keep_previous(con: duckdb.DuckDBPyConnection) -> None:
    """Before a refresh writes its settings: keep the stored ones as the temp table
    `build_settings_before` (as_of, range_start, range_end; no row when there were none)."""
    con.execute(
        f"create or replace temp table {PREVIOUS_SETTINGS} "
        "(as_of date, range_start date, range_end date)"
    )
    with suppress(duckdb.CatalogException):  # a file without settings: no date to move from
        con.execute(
            f"insert into {PREVIOUS_SETTINGS} "
            "select as_of, range_start, range_end from meta.build_settings"
        )


def days_moved(con: duckdb.DuckDBPyConnection) -> int | None:
    """How many days the as-of date moved in this refresh (negative: back); None when the date
    it moved from (or to) is unknown."""
    try:
        row = con.execute(
            f"select n.as_of - b.as_of from meta.build_settings as n, {PREVIOUS_SETTINGS} as b"
        ).fetchone()
    except duckdb.CatalogException:
        return None
    return None if row is None or row[0] is None else int(row[0])
