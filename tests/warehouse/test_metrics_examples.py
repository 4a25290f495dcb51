"""The worked examples of metrics.md and the allocation rule of contracts.md section 1."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import duckdb
import pytest

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import EUR_CHANNEL, GBP_CHANNEL, Batch
from warehouse.build import build_warehouse

JAN = (date(2025, 1, 1), date(2025, 1, 31))


def test_occupancy_100_units_31_nights(lake, query, tmp_path) -> None:
    batch = Batch().reference(units=100)
    for i in range(80):
        batch.reservation(i + 1, "2025-01-01", "2025-02-01", unit_id=1000 + i)
    # not sold: an option, a quotation, a cancellation
    batch.reservation(81, "2025-01-01", "2025-02-01", status=11, unit_id=1080)
    batch.reservation(82, "2025-01-01", "2025-02-01", status=-5)
    batch.reservation(83, "2025-01-01", "2025-02-01", status=-12, cancelled="2024-12-01")
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path, reporting_range=JAN)
    available, sold, days = query(
        "select sum(nights_available), sum(nights_sold), count(distinct date_day) "
        "from marts.occupancy_daily"
    )[0]
    assert (available, sold, days) == (3100, 2480, 31)
    assert round(sold / available, 3) == 0.8
    assert query("select distinct round(occupancy, 4) from marts.occupancy_daily") == [(0.8,)]


def test_available_occupancy_with_units_out_of_order(lake, query, tmp_path) -> None:
    batch = Batch().reference(units=100)
    for i in range(5):
        batch.reservation(
            100 + i, "2025-01-10", "2025-01-11", category="BLOCK", unit_id=1000 + i, nightly="0"
        )
    for i in range(30):
        batch.reservation(i + 1, "2025-01-10", "2025-01-11", unit_id=1010 + i)
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path)
    row = query(
        "select nights_available, nights_sold, owner_hold_nights, occupancy, "
        "available_occupancy from marts.occupancy_daily"
    )
    available, sold, held, occupancy, available_occupancy = row[0]
    assert (available, sold, held) == (100, 30, 5)
    assert f"{occupancy:.2%}" == "30.00%"
    assert f"{available_occupancy:.2%}" == "31.58%"
    assert query("select count(*) from core.fct_unit_nights where is_owner_hold") == [(5,)]


def _monthly_room_revenue(query) -> dict[str, Decimal]:
    rows = query(
        "select strftime(date_day, '%Y-%m'), sum(room_revenue_gross) from marts.revenue_daily "
        "group by 1 order by 1"
    )
    return {m: v for m, v in rows}


def test_stay_across_month_boundary_and_extension(lake, query, tmp_path) -> None:
    Batch().reference(units=2).reservation(
        1, "2024-12-20", "2025-01-05", unit_id=1000, nightly="100.00"
    ).flush(lake, kind="full")
    build_warehouse(tmp_path)
    assert _monthly_room_revenue(query) == {
        "2024-12": Decimal("1200.00"),
        "2025-01": Decimal("400.00"),
    }

    # extended to Jan 8: the service adds a rent line for the new nights
    Batch().reservation(
        1,
        "2024-12-20",
        "2025-01-08",
        unit_id=1000,
        rent_lines=[
            ("2024-12-20", "2025-01-05", "1600.00"),
            ("2025-01-05", "2025-01-08", "300.00"),
        ],
    ).flush(lake)
    build_warehouse(tmp_path)
    assert _monthly_room_revenue(query) == {
        "2024-12": Decimal("1200.00"),
        "2025-01": Decimal("700.00"),
    }
    assert query("select sum(nights_sold) from marts.revenue_daily") == [(19,)]


ALLOCATION_CASES = {
    "remainder-first-night": ("100.00", ["33.34", "33.33", "33.33"]),
    "negative-discount": ("-100.00", ["-33.34", "-33.33", "-33.33"]),
    "cents": ("0.02", ["0.01", "0.01", "0.00"]),
    "even": ("300.00", ["100.00", "100.00", "100.00"]),
}


@pytest.fixture(scope="module")
def allocated(tmp_path_factory) -> dict[int, list[str]]:
    """One build for all allocation cases: reservation i carries case i's single line."""
    data_dir = tmp_path_factory.mktemp("allocation")
    batch = Batch().reference(units=len(ALLOCATION_CASES))
    for i, (total, _) in enumerate(ALLOCATION_CASES.values()):
        batch.reservation(
            i + 1, "2025-02-01", "2025-02-04", rent_lines=[("2025-02-01", "2025-02-04", total)]
        )
    batch.flush(Lake(data_dir), kind="full")
    result = build_warehouse(data_dir)
    con = duckdb.connect(str(result.path), read_only=True)
    try:
        rows = con.execute(
            "select reservation_id, list(room_revenue order by night_date) "
            "from core.fct_stay_nights group by 1"
        ).fetchall()
    finally:
        con.close()
    return {rid: [str(v) for v in values] for rid, values in rows}


@pytest.mark.parametrize("case", list(ALLOCATION_CASES), ids=list(ALLOCATION_CASES))
def test_allocation_remainders(allocated, case) -> None:
    index = list(ALLOCATION_CASES).index(case) + 1
    assert allocated[index] == ALLOCATION_CASES[case][1]


def test_line_without_period_spreads_over_the_stay(lake, query, tmp_path) -> None:
    batch = (
        Batch()
        .reference(units=1)
        .reservation(1, "2025-02-01", "2025-02-03", nightly="50.00", total_line="130.00")
    )
    batch.bill_line(1, bill_line_type=20, resource_type="EXTRA", total="30.00")
    batch.bill_line(1, bill_line_type=250, total="3.00", payer_type="PAYING_CUSTOMER")
    batch.bill_line(1, bill_line_type=70, total="3.00", payer_type="PAYING_CUSTOMER")
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path)
    rows = query(
        "select night_date, room_revenue, extra_revenue, total_revenue, tourist_tax "
        "from core.fct_stay_nights order by night_date"
    )
    assert [tuple(str(x) for x in r[1:]) for r in rows] == [
        ("50.00", "15.00", "65.00", "1.50"),
        ("50.00", "15.00", "65.00", "1.50"),
    ]


def test_currencies_are_never_summed(lake, query, tmp_path) -> None:
    batch = Batch().reference(units=10)
    batch.reservation(
        1, "2025-03-01", "2025-03-02", channel=EUR_CHANNEL, unit_id=1000, nightly="100.00"
    )
    batch.reservation(
        2, "2025-03-01", "2025-03-02", channel=GBP_CHANNEL, unit_id=1001, nightly="80.00"
    )
    batch.bill_line(2, bill_line_type=100, total="8.00", payer_type="AGENT")
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path)
    rows = query(
        "select currency_code, room_revenue_gross, commission_gross, "
        "room_revenue_after_commission_gross, nights_sold, nights_available, adr_gross, "
        "revpar_gross, adr_after_commission_gross from marts.revenue_daily order by 1"
    )
    assert [tuple(str(x) for x in r) for r in rows] == [
        ("EUR", "100.00", "0.00", "100.00", "1", "10", "100.00", "10.00", "100.00"),
        ("GBP", "80.00", "8.00", "72.00", "1", "10", "80.00", "8.00", "72.00"),
    ]
    types = dict(
        query(
            "select column_name, data_type from information_schema.columns "
            "where table_schema = 'marts' and table_name = 'revenue_daily'"
        )
    )
    money = ("room_revenue_gross", "room_revenue_net", "adr_gross", "adr_net", "revpar_net")
    assert all(types[c].startswith("DECIMAL") for c in money)
    mix = query(
        "select currency_code, nights_share, room_revenue_share from marts.channel_mix_monthly "
        "order by 1"
    )
    assert mix == [("EUR", 0.5, 1.0), ("GBP", 0.5, 1.0)]
