"""The warehouse's as-of date is the service's date the lake's newest run recorded: meta,
booking pace, headline KPIs and the dashboard use it, and a new date rebuilds what reads it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb

from lake.state import AsOf, write_as_of
from lake.store import Lake as StoreLake
from pipelines.dashboard import build_dashboard
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from warehouse.asof import current_as_of
from warehouse.build import build_warehouse
from warehouse.kpis import headline
from warehouse.refresh import refresh_warehouse

HEADER = "the service's Date header"


def _record(tmp_path: Path, day: date, batch: str) -> None:
    moment = datetime(day.year, day.month, day.day, 6, tzinfo=UTC)
    write_as_of(StoreLake(tmp_path / "lake"), batch, AsOf(day, moment, HEADER))


def test_the_recorded_service_date_is_the_as_of_everywhere(
    lake: Lake, tmp_path: Path, query: Callable[..., list[tuple[Any, ...]]]
) -> None:
    Batch().reference(units=3).reservation(1, "2025-03-01", "2025-03-04").flush(lake, kind="full")
    _record(tmp_path, date(2025, 3, 2), "20990101T000000Z-00000001")
    result = build_warehouse(tmp_path)
    assert result.as_of == date(2025, 3, 2)
    assert query("select as_of, as_of_source, service_time from meta.build_settings") == [
        (date(2025, 3, 2), HEADER, datetime(2025, 3, 2, 6))
    ]
    assert query("select tenant from meta.build_settings") == [("default",)]
    assert query("select max(as_of_date) from marts.booking_pace") == [(date(2025, 3, 2),)]
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        labels = [name for name, _ in headline(con)]
    finally:
        con.close()
    assert "occupancy, last 30 nights to 2025-03-02" in labels  # not the last night sold
    page = build_dashboard(result.path, tmp_path / "d.html").read_text()
    assert '<time datetime="2025-03-02">' in page and "Date header" in page
    assert (
        current_as_of(result.path, tmp_path / "lake")
        == f"2025-03-02 ({HEADER} at 2025-03-02 06:00 UTC)"
    )
    override = build_dashboard(result.path, tmp_path / "o.html", today=date(2025, 3, 3))
    assert '<time datetime="2025-03-03">' in override.read_text()


def test_a_new_service_date_rebuilds_what_reads_it(
    lake: Lake, tmp_path: Path, query: Callable[..., list[tuple[Any, ...]]]
) -> None:
    Batch().reference(units=3).reservation(1, "2025-03-01", "2025-03-04").flush(lake, kind="full")
    _record(tmp_path, date(2025, 2, 26), "20990101T000000Z-00000001")
    assert refresh_warehouse(tmp_path) is not None  # first build
    assert refresh_warehouse(tmp_path) is None  # nothing changed, same date
    _record(tmp_path, date(2025, 3, 1), "20990101T000001Z-00000002")  # a run, nothing landed
    rebuilt = refresh_warehouse(tmp_path)
    assert rebuilt is not None
    assert {"core.dim_dates", "marts.booking_pace"} <= set(rebuilt.models)
    assert query("select as_of from meta.build_settings") == [(date(2025, 3, 1),)]
    assert query("select max(as_of_date) from marts.booking_pace") == [(date(2025, 3, 1),)]


def test_the_tenant_of_a_data_directory_is_its_tenant_level() -> None:
    from lake.tenancy import tenant_of

    assert tenant_of("/data/tenant=north") == "north"
    assert tenant_of("/data") == "default"
    assert tenant_of("/data/tenant=") == "default"
