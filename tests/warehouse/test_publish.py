"""Atomic publish: readers of the old file keep a consistent old version during a rebuild."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from tests.warehouse.scenarios import Batch
from warehouse.build import build_warehouse
from warehouse.models import discover_models, models_depending_on

READER = textwrap.dedent(
    """
    import sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    print(con.execute("select count(*) from marts.occupancy_daily").fetchone()[0], flush=True)
    sys.stdin.readline()  # hold the old file open until the build is published
    print(con.execute("select count(*) from marts.occupancy_daily").fetchone()[0], flush=True)
    """
)


def test_rebuild_while_readers_hold_the_old_file(lake, tmp_path: Path) -> None:
    Batch().reference(units=3).reservation(1, "2025-01-01", "2025-01-03").flush(lake, kind="full")
    first = build_warehouse(tmp_path)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(first.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    same_process = duckdb.connect(str(first.path), read_only=True)
    try:
        assert reader.stdout is not None and reader.stdin is not None
        before = int(reader.stdout.readline())
        Batch().reservation(2, "2025-01-01", "2025-01-06").flush(lake)
        second = build_warehouse(tmp_path)
        # both old readers still see the complete old version
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert int(reader.stdout.readline()) == before == 2
        assert same_process.execute("select count(*) from marts.occupancy_daily").fetchone() == (2,)
    finally:
        same_process.close()
        reader.wait(timeout=30)
    assert reader.returncode == 0
    fresh = duckdb.connect(str(second.path), read_only=True)
    try:
        assert fresh.execute("select count(*) from marts.occupancy_daily").fetchone() == (5,)
    finally:
        fresh.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lake", "warehouse.duckdb"]


def test_failed_build_keeps_the_old_file(lake, tmp_path: Path, monkeypatch) -> None:
    Batch().reference(units=1).flush(lake, kind="full")
    first = build_warehouse(tmp_path)
    stamp = first.path.stat().st_mtime_ns

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("model failed")

    monkeypatch.setattr("warehouse.build.apply_comments", boom)
    with pytest.raises(RuntimeError, match="model failed"):
        build_warehouse(tmp_path)
    assert first.path.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lake", "warehouse.duckdb"]


def test_only_rebuilds_the_models_of_changed_tables(lake, tmp_path: Path) -> None:
    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-03").flush(lake, kind="full")
    build_warehouse(tmp_path)
    lake.write("cash_accounts", [{"cash_account_id": 1, "company_id": 1, "currency_code": "EUR"}])
    lake.write(
        "cash_clearances",
        [
            {
                "cash_clearance_id": 1,
                "cash_account_id": 1,
                "clearance_date": "2025-01-02",
                "expected_amount": "10.00",
                "counted_cash": "9.50",
                "difference": "-0.50",
            }
        ],
    )
    only = models_depending_on({"cash_clearances", "cash_accounts"})
    assert only == {
        "staging.stg_cash_clearances",
        "staging.stg_cash_accounts",
        "core.fct_cash_clearances",
        "core.dim_dates",
        "core.dim_reporting_currencies",  # reads core.dim_dates (the range)
        "core.fct_unit_nights",
        "core.fct_rate_nights",
        "core.fct_offer_stay_months",  # reads core.dim_dates (the range)
        "core.fct_ancillary_stay_months",  # reads core.dim_dates (the range)
        "core.fct_ancillary_cells",
        "core.fct_unit_night_months",
        "core.fct_channel_months",  # reads core.dim_dates (the range)
        "core.fct_night_sales",  # reads core.dim_dates (the range)
        "core.fct_allotment_pickup_weeks",  # reads core.dim_dates (the range)
        "marts.cash_clearance_daily",
        "marts.occupancy_daily",
        "marts.revenue_daily",
        "marts.rate_availability_daily",
        "marts.booking_pace",
        "marts.channel_mix_monthly",
        "marts.sales_daily",
        "marts.forecast_daily",
        "marts.allotment_pickup",
        "marts.orphan_nights",
        "marts.channel_net_revenue_monthly",  # these read core.dim_dates (the range)
        "marts.ancillary_revenue_monthly",
        "marts.offer_discount_monthly",
    }
    result = build_warehouse(tmp_path, only=only)
    assert set(result.models) == only
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        assert con.execute(
            "select counted_total, difference from marts.cash_clearance_daily"
        ).fetchall() == [(9.5, -0.5)]
        assert con.execute("select count(*) from core.fct_reservations").fetchone() == (1,)
    finally:
        con.close()
    assert len(discover_models()) > len(only)
