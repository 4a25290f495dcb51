"""Cancellation money against the sandbox's own ground truth, to the cent.

`World.ground_truth()` knows each cancelled guest stay's value when cancelled and the
compensation it kept from the world's state (`sandbox/world/truth_cancellations.py`); the
warehouse gets the value from the journals' reversals and the compensation from the bills'
lines 190. Every row must agree both ways: the monthly cancellation measures per location and
currency, and the compensation allocated to the cancelled nights in revenue_daily.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import duckdb
import pytest

from tests.e2e.conftest import PipelineRun

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]


def _rows(run: PipelineRun, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(run.settings.warehouse_path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _compare(truth: dict[tuple[Any, ...], tuple[Any, ...]], mart: dict) -> list[str]:
    out = [f"missing from the mart: {k} {truth[k]}" for k in truth.keys() - mart.keys()]
    out += [f"not in the truth: {k} {mart[k]}" for k in mart.keys() - truth.keys()]
    out += [
        f"{k}: truth {truth[k]} mart {mart[k]}"
        for k in truth.keys() & mart.keys()
        if truth[k] != mart[k]
    ]
    return sorted(out)


def test_cancellation_measures_match_truth_to_the_cent(full_run: PipelineRun) -> None:
    t = full_run.handle.world.ground_truth()["cancellations_monthly"]
    truth = {
        (m, int(loc), cur): (int(n), value, kept, float(kept) / float(value) if value else None)
        for m, loc, cur, n, value, kept in zip(
            t["month"],
            t["location_id"],
            t["currency_code"],
            t["cancellations"],
            t["cancelled_value"],
            t["retained_cancellation_revenue"],
            strict=True,
        )
    }
    mart = {
        (m, loc, cur): (n, value, kept, share)
        for m, loc, cur, n, value, kept, share in _rows(
            full_run,
            "select month_start, location_id, currency_code, cancellations, cancelled_value, "
            "retained_cancellation_revenue, retained_share from marts.cancellations_monthly "
            "where cancellations > 0",
        )
    }
    bad = _compare(truth, mart)
    assert not bad, f"{len(bad)} of {len(truth)} rows differ:\n" + "\n".join(bad[:25])
    # the comparison covered real cancellations: retained money, refunds, several currencies
    assert sum(n for n, *_ in truth.values()) > 100
    assert {k[2] for k in truth} == {"EUR", "GBP"}
    kept = sum(v[2] for v in truth.values())
    value = sum(v[1] for v in truth.values())
    assert Decimal(0) < kept < value


def test_cancellation_revenue_per_night_matches_truth(full_run: PipelineRun) -> None:
    t = full_run.handle.world.ground_truth()["cancellation_revenue"]
    truth = {
        (d, int(loc), int(rt), cur): v
        for d, loc, rt, cur, v in zip(
            t["date"],
            t["location_id"],
            t["resource_id"],
            t["currency_code"],
            t["cancellation_revenue"],
            strict=True,
        )
    }
    mart = {
        (d, loc, rt, cur): v
        for d, loc, rt, cur, v in _rows(
            full_run,
            "select date_day, location_id, accommodation_type_id, currency_code, "
            "cancellation_revenue from marts.revenue_daily where cancellation_revenue <> 0",
        )
    }
    bad = _compare(truth, mart)
    assert not bad, f"{len(bad)} of {len(truth)} rows differ:\n" + "\n".join(bad[:25])
    assert len(truth) > 500
    # never room revenue: the nights of cancelled stays sell nothing
    monthly = full_run.handle.world.ground_truth()["cancellations_monthly"]
    assert sum(truth.values()) == sum(monthly["retained_cancellation_revenue"])


def test_cancelled_bills_are_settled_at_their_compensation(full_run: PipelineRun) -> None:
    """In the warehouse too: a cancelled reservation's bill totals its compensation, all of it
    paid, and its only revenue is cancellation revenue."""
    rows = _rows(
        full_run,
        """
        select
            r.reservation_id,
            r.room_revenue + r.extra_revenue + r.tourist_tax as booked,
            r.cancellation_revenue,
            sum(b.total) filter (where b.bill_line_type = 70) as total,
            sum(b.total) filter (where b.bill_line_type = 80) as paid,
            sum(b.total) filter (where b.bill_line_type = 90) as due,
        from core.fct_reservations as r
        inner join core.fct_bill_lines as b using (reservation_id)
        where r.is_cancelled
        group by all
        """,
    )
    assert len(rows) > 100
    bad = [r for r in rows if not (r[1] == 0 and r[2] == r[3] == r[4] and r[5] == 0)]
    assert not bad, bad[:10]
