"""List prices from rates of every quantifier and window (docs/metrics.md, "List prices", and
the worked example of `marts.rate_availability_daily`): every figure the example quotes."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from tests.warehouse.scenarios import TYPE_ID, Batch
from warehouse.build import build_warehouse
from warehouse.macros import MACROS
from warehouse.models import discover_models

MARCH = (date(2025, 3, 1), date(2025, 3, 31))
BAR = 7

RATES: list[dict[str, Any]] = [
    # rate_id, value, quantifier, priority and the rate's bounds; no valid_from / valid_to
    # unless given, as the service may leave them out
    {"rate_id": 1, "value": "100.05", "quantifier": "OVERRIDE", "priority": 1},
    {
        "rate_id": 2,
        "value": "120.00",
        "quantifier": "OVERRIDE",
        "priority": 3,
        "applicable_days": ["FRI", "SAT"],
    },
    {"rate_id": 3, "value": "15.00", "quantifier": "ABSOLUTE", "priority": 900, "max_duration": 2},
    {"rate_id": 4, "value": "-10.00", "quantifier": "RELATIVE", "priority": 7, "min_duration": 14},
    {
        "rate_id": 5,
        "value": "90.00",
        "quantifier": "OVERRIDE",
        "priority": 9,
        "valid_from": "2025-03-10",
        "valid_to": "2025-03-16",
        "min_duration": 7,
        "max_duration": 7,
    },
    {
        "rate_id": 6,
        "value": "-8.00",
        "quantifier": "RELATIVE",
        "priority": 10,
        "valid_from": "2025-03-01",
        "valid_to": "2025-03-31",
        "bookdate_to": "2025-01-31",
    },
    {
        "rate_id": 7,
        "value": "80.00",
        "quantifier": "OVERRIDE",
        "priority": 20,
        "usage_duration_from": "2025-03-20",
        "usage_duration_to": "2025-03-22",
        "bookdate_from": "2025-02-15",
    },
]

# reservation: arrival, departure, booked, expected list price per night
STAYS: dict[int, tuple[str, str, str, list[str]]] = {
    1: ("2025-03-07", "2025-03-09", "2025-02-20", ["135.00"] * 2),
    2: ("2025-03-03", "2025-03-06", "2025-02-20", ["100.05"] * 3),
    3: ("2025-03-10", "2025-03-17", "2025-02-01", ["90.00"] * 7),
    4: (
        "2025-03-17",
        "2025-03-31",
        "2025-01-15",
        ["82.04"] * 4 + ["98.40"] * 2 + ["82.04"] * 5 + ["98.40"] * 2 + ["82.04"],
    ),
    5: ("2025-03-20", "2025-03-22", "2025-03-01", ["95.00"] * 2),
}


def _build(lake: Any, tmp_path: Path, rates: list[dict[str, Any]]) -> None:
    batch = Batch().reference(units=6)
    batch.tables["rate_types"].append({"rate_type_id": BAR, "code": "BAR", "currency_code": "EUR"})
    base = {"resource_id": TYPE_ID, "rate_type_id": BAR, "status": 1}
    batch.tables["rates"] += [{**base, **r} for r in rates]
    for rid, (arrival, departure, booked, prices) in STAYS.items():
        first = date.fromisoformat(arrival).toordinal()
        nights = [date.fromordinal(first + k).isoformat() for k in range(len(prices) + 1)]
        batch.reservation(
            rid,
            arrival,
            departure,
            booked=f"{booked}T09:00:00",
            unit_id=1000 + rid,
            rent_lines=[(nights[k], nights[k + 1], p) for k, p in enumerate(prices)],
        )
        batch.tables["reserved_resources"][-1]["rate_type_id"] = BAR
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path, as_of=date(2025, 3, 1), reporting_range=MARCH)


def test_worked_example_of_the_rate_rules(lake, query, tmp_path: Path) -> None:
    _build(lake, tmp_path, RATES)
    rows = query(
        "select reservation_id, list_price from core.fct_stay_rate_nights "
        "order by reservation_id, night_date"
    )
    got: dict[int, list[str]] = {}
    for rid, price in rows:
        got.setdefault(rid, []).append(str(price))
    assert got == {rid: stay[3] for rid, stay in STAYS.items()}
    # which rates priced them: reservation 4's first night is the base less both discounts
    assert query(
        "select rate_id, base_price, adjustment_rate_ids from core.fct_stay_rate_nights "
        "where reservation_id = 4 and night_date = date '2025-03-17'"
    ) == [(1, Decimal("100.05"), [4, 6])]
    assert query(
        "select rate_id, adjustment_rate_ids from core.fct_stay_rate_nights "
        "where reservation_id = 5 order by night_date"
    ) == [(7, [3]), (7, [3])]

    mart = {
        d.isoformat(): (str(lp), n, None if s is None else str(s))
        for d, lp, n, s in query(
            "select date_day, list_price, nights_sold, sold_list_price "
            "from marts.rate_availability_daily"
        )
    }
    assert mart["2025-03-20"] == ("80.00", 2, "88.52")
    assert mart["2025-03-12"] == ("90.00", 1, "90.00")
    assert mart["2025-03-08"] == ("120.00", 1, "135.00")
    # the reference stay (7 nights, booked that day): no surcharge, discount or early booking
    reference = dict(
        query("select strftime(night_date, '%d'), list_price from core.fct_rate_nights")
    )
    assert {d: str(reference[d]) for d in ("03", "07", "09", "16", "17", "22", "23")} == {
        "03": "100.05",
        "07": "120.00",
        "09": "100.05",  # Sunday, before the package's arrival window
        "16": "90.00",  # last arrival day of the package
        "17": "100.05",
        "22": "80.00",  # the promotion (booked that day, after 2025-02-15)
        "23": "100.05",
    }
    # realised ADR against the stays' own list prices: the bills match them to the cent
    assert query(
        "select count(*) from marts.rate_availability_daily "
        "where nights_sold > 0 and adr_vs_sold_list_price <> 0"
    ) == [(0,)]


def test_windows_and_ranks_at_their_edges(lake, query, tmp_path: Path) -> None:
    """Each bound is inclusive, a RELATIVE amount rounds half away from zero, an adjustment
    ranked below the winning OVERRIDE is left out, the price never drops below 0, and an
    unknown-priority OVERRIDE ranks lowest."""
    rates = [
        {"rate_id": 1, "value": "100.05", "quantifier": "OVERRIDE", "priority": None},
        {"rate_id": 2, "value": "50.00", "quantifier": None, "priority": 2},  # = OVERRIDE
        # ranks below rate 2 (priority 1): never counts
        {"rate_id": 3, "value": "-20.00", "quantifier": "ABSOLUTE", "priority": 1},
        # exactly 3 nights, arriving 03-03 .. 03-03, booked 02-20 .. 02-20
        {
            "rate_id": 4,
            "value": "-99.00",
            "quantifier": "ABSOLUTE",
            "priority": 5,
            "min_duration": 3,
            "max_duration": 3,
            "valid_from": "2025-03-03",
            "valid_to": "2025-03-03",
            "bookdate_from": "2025-02-20",
            "bookdate_to": "2025-02-20",
        },
        # +0.01 % of 50.00 = 0.005 -> 0.01
        {"rate_id": 5, "value": "0.01", "quantifier": "RELATIVE", "priority": 6},
    ]
    _build(lake, tmp_path, rates)
    prices = {
        rid: [str(p) for p in ps]
        for rid, ps in query(
            "select reservation_id, list(list_price order by night_date) "
            "from core.fct_stay_rate_nights group by all"
        )
    }
    # reservation 2 (3 nights from 03-03 booked 02-20) meets every bound of rate 4:
    # 50.00 - 99.00 + 0.01 -> 0.00; the others keep 50.00 + 0.01
    assert prices[2] == ["0.00"] * 3
    assert all(p == "50.01" for rid, ps in prices.items() if rid != 2 for p in ps)


def test_rates_are_listed_by_month_only_for_the_stays_types(lake, tmp_path: Path) -> None:
    """Each windowed rate is listed under the months of the nights of the stays of its own type
    and rate type (a refresh's few reservations list their types' rates, not every rate's
    months: docs/benchmarks.md, session 21), and the prices stay those of the worked example."""
    other = TYPE_ID + 1  # a type no stay has, with the same rates
    copies = [{**r, "rate_id": r["rate_id"] + 100, "resource_id": other} for r in RATES]
    _build(lake, tmp_path, RATES + copies)
    sql = discover_models()["core.fct_stay_rate_nights"].sql
    listed = sql.rsplit("select * from final", 1)[0] + (
        "select accommodation_type_id, count(*) from rate_months group by all order by 1"
    )
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)
    try:
        for macro in MACROS:
            con.execute(macro)
        months = con.execute(listed).fetchall()
        prices = con.execute(
            "select count(*) from core.fct_stay_rate_nights where list_price is not null"
        ).fetchall()
    finally:
        con.close()
    assert [t for t, _ in months] == [TYPE_ID], months
    assert prices == [(sum(len(stay[3]) for stay in STAYS.values()),)]
