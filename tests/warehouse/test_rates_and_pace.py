"""Nightly list price rule (contracts.md section 1) and OTB / pickup in booking_pace."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tests.warehouse.scenarios import TYPE_ID, Batch
from warehouse.build import build_warehouse


def test_list_price_and_booking_pace(lake, query, tmp_path: Path) -> None:
    batch = Batch().reference(units=2)
    batch.tables["rate_types"].append({"rate_type_id": 7, "code": "BAR", "currency_code": "EUR"})
    rate = {
        "resource_id": TYPE_ID,
        "rate_type_id": 7,
        "status": 1,
        "valid_from": "2025-03-01",
        "valid_to": "2025-03-31",
    }
    batch.tables["rates"] += [
        {**rate, "rate_id": 1, "value": "80.00", "priority": 1},
        # weekends (2025-03-08 is a Saturday) at a higher priority
        {**rate, "rate_id": 2, "value": "120.00", "priority": 5, "applicable_days": ["SAT", "SUN"]},
        # same priority as rate 2 on Saturday 8th only: the higher rate_id wins the tie
        {
            **rate,
            "rate_id": 3,
            "value": "130.00",
            "priority": 5,
            "valid_from": "2025-03-08",
            "valid_to": "2025-03-08",
        },
        {**rate, "rate_id": 4, "value": "999.00", "priority": 9, "status": 0},  # inactive
    ]
    # booked 2025-02-20 (OTB from then on); a cancelled booking counts until its cancel date
    batch.reservation(1, "2025-03-07", "2025-03-09", booked="2025-02-20T09:00:00", unit_id=1000)
    batch.reservation(
        2,
        "2025-03-07",
        "2025-03-08",
        booked="2025-02-10T09:00:00",
        status=-12,
        cancelled="2025-02-25T09:00:00",
        unit_id=1001,
    )
    batch.flush(lake, kind="full")
    build_warehouse(
        tmp_path, as_of=date(2025, 3, 1), reporting_range=(date(2025, 3, 1), date(2025, 3, 31))
    )

    prices = dict(
        query(
            "select strftime(night_date, '%d'), list_price from core.fct_rate_nights "
            "where night_date between date '2025-03-07' and date '2025-03-09'"
        )
    )
    assert {d: str(v) for d, v in prices.items()} == {"07": "80.00", "08": "130.00", "09": "120.00"}

    pace = query(
        "select as_of_date, otb_nights, pickup_nights from marts.booking_pace "
        "where stay_date = date '2025-03-07' and as_of_date >= date '2025-02-08' order by 1"
    )
    # as of Feb 15: only the (later cancelled) booking; Feb 22: both; Mar 1: cancelled one gone
    assert [(a.isoformat(), n, p) for a, n, p in pace] == [
        ("2025-02-08", 0, 0),
        ("2025-02-15", 1, 1),
        ("2025-02-22", 2, 1),
        ("2025-03-01", 1, -1),
    ]
