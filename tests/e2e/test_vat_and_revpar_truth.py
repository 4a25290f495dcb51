"""Net of VAT and RevPAR from the marts against the sandbox's served records, to the cent.

- Monthly RevPAR per park and currency read the way an analyst does (sum of revenue over sum of
  nights available of the currency's revenue_daily rows) equals the park's revenue in that
  currency over every unit night of the park in the month, computed here from the world.
- Gross - net in revenue_daily is the VAT of the bills: per currency, the VAT lines (60) of
  the sold reservations' bills add up to revenue_daily's total_vat, and each bill's VAT line
  equals the VAT the warehouse allocates to its item lines.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import duckdb
import pytest

from sandbox.world.truth_frames import (
    cents,
    lines_of,
    money,
    months,
    nights_of,
    reservations_of,
)
from sandbox.world.truth_marts import reporting_range
from sandbox.world.truth_pricing import supply
from tests.e2e.conftest import PipelineRun

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

CENT = Decimal("0.01")
Key = tuple[int, date, str]


def _query(run: PipelineRun, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(run.settings.warehouse_path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _truth_monthly(run: PipelineRun) -> dict[Key, tuple[int, int, int]]:
    """(park, month, currency) -> gross cents, net cents, nights available of the park."""
    world = run.handle.world
    with world.lock:
        first, last = reporting_range(world)
        lo, hi = first.toordinal(), last.toordinal()
        res = reservations_of(world)
        nights = nights_of(res, lines_of(world, res))
        units = supply(world, lo, hi)
        location = {t["resourceId"]: t["locationId"] for t in world.records("accommodationtypes")}
    available: dict[tuple[int, date], int] = defaultdict(int)
    for type_id, month, n in zip(
        units["type_id"], months(units["ord"]), units["available"], strict=True
    ):
        available[(location[int(type_id)], month)] += int(n)
    sold = nights[nights["sold"] & nights["ord"].between(lo, hi)]
    revenue: dict[Key, list[int]] = defaultdict(lambda: [0, 0])
    for park, month, currency, room, room_net in zip(
        sold["location_id"],
        months(sold["ord"]),
        sold["currency_code"],
        sold["room"],
        sold["room_net"],
        strict=True,
    ):
        revenue[(int(park), month, currency)][0] += int(room)
        revenue[(int(park), month, currency)][1] += int(room_net)
    currencies = {c for _p, _m, c in revenue}
    return {
        (park, month, c): (*revenue.get((park, month, c), (0, 0)), n)
        for (park, month), n in available.items()
        for c in currencies
    }


def _per(amount: Decimal, n: int) -> Decimal | None:
    return None if n == 0 else (amount / n).quantize(CENT, ROUND_HALF_UP)


def test_monthly_revpar_per_park_and_currency_is_revenue_over_all_unit_nights(
    full_run: PipelineRun,
) -> None:
    truth = _truth_monthly(full_run)
    rows = _query(
        full_run,
        "select location_id, date_trunc('month', date_day)::date, currency_code, "
        "sum(room_revenue_gross), sum(room_revenue_net), sum(nights_available), "
        "count(*) filter (where nights_sold = 0) "
        "from marts.revenue_daily group by all",
    )
    mart = {(int(p), m, c): (g, n, int(a), int(z)) for p, m, c, g, n, a, z in rows}
    assert set(mart) == set(truth)
    bad = []
    for key, (gross, net, available) in truth.items():
        m_gross, m_net, m_available, _unsold = mart[key]
        want = (_per(money(gross), available), _per(money(net), available))
        got = (_per(m_gross, m_available), _per(m_net, m_available))
        if (m_available, got) != (available, want):
            bad.append(f"{key}: truth {available} nights, RevPAR {want}; mart {m_available}, {got}")
    assert not bad, "\n".join(bad[:20])
    # not vacuous: GBP sells in parks on only some nights (the rows the bug left out)
    assert any(c == "GBP" and z > 0 and n != 0 for (_p, _m, c), (_g, n, _a, z) in mart.items())
    assert sum(1 for v in truth.values() if v[1] != 0) > 20


def test_net_is_gross_less_the_vat_of_the_bills(full_run: PipelineRun) -> None:
    world = full_run.handle.world
    with world.lock:
        res = reservations_of(world)
        lines = list(world.records("billlines"))
    sold = dict(zip(res["reservation_id"], res["sold"], strict=True))
    currency = dict(zip(res["reservation_id"], res["currency_code"], strict=True))
    vat_lines: dict[str, int] = defaultdict(int)
    per_bill: dict[tuple[int, str], int] = {}
    for ln in lines:
        if int(ln["billLineType"]) == 60:
            per_bill[(ln["reservationId"], ln["payerType"])] = cents(ln["total"])
            if sold[ln["reservationId"]]:
                vat_lines[currency[ln["reservationId"]]] += cents(ln["total"])
    mart = dict(
        _query(
            full_run,
            "select currency_code, sum(total_vat) from marts.revenue_daily group by 1",
        )
    )
    assert {c: money(v) for c, v in vat_lines.items()} == mart
    # each bill: its VAT line is the VAT the warehouse allocates to its item lines
    allocated = {
        (rid, payer): int(v)
        for rid, payer, v in _query(
            full_run,
            "select reservation_id, payer_type, "
            "coalesce(sum(vat_cents) filter (where line_class = 'item'), 0) "
            "from core.fct_bill_lines group by all "
            "having count(*) filter (where bill_line_type = 60) > 0",
        )
    }
    assert allocated == per_bill
    # the world's rent carries 9 % VAT: 8.26 % of gross room revenue
    gross, vat = _query(
        full_run, "select sum(room_revenue_gross), sum(room_vat) from marts.revenue_daily"
    )[0]
    assert float(vat / gross) == pytest.approx(9 / 109, abs=1e-4)
