"""The two marts the app reads beyond the others: `sales_daily` splits revenue_daily and
channel_mix_monthly exactly, and `forecast_daily` follows docs/forecast.md, recomputed here in
Python from booking_pace, sales_daily and occupancy_daily."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from tests.serve.conftest import Built

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

MEASURES = "nights_sold, room_revenue_gross, room_revenue_net, commission_gross, commission_net"


def test_sales_daily_sums_to_revenue_daily(built: Built) -> None:
    keys = "date_day, location_id, accommodation_type_id, currency_code"
    sales = built.rows(f"select {keys}, {_sums()} from marts.sales_daily group by all order by all")
    revenue = built.rows(
        f"select {keys}, {_sums()} from marts.revenue_daily group by all "
        "having sum(nights_sold) <> 0 or sum(room_revenue_gross) <> 0 or sum(commission_gross) <> 0 "
        "order by all"
    )
    assert len(sales) > 1000
    assert sales == revenue


def test_sales_daily_sums_to_channel_mix_monthly(built: Built) -> None:
    keys = "date_trunc('month', date_day)::date, distribution_channel_id, currency_code"
    sales = built.rows(f"select {keys}, {_sums()} from marts.sales_daily group by all order by all")
    mix = built.rows(
        "select month_start, distribution_channel_id, currency_code, "
        f"{_sums()} from marts.channel_mix_monthly group by all order by all"
    )
    assert sales == mix


def test_booking_windows_follow_the_reservations_lead_time(built: Built) -> None:
    found = built.rows(
        "select s.booking_window_days, s.booking_window, sum(s.nights_sold) "
        "from marts.sales_daily s group by all order by 1"
    )
    expected: dict[int, int] = defaultdict(int)
    bounds = (0, 7, 14, 30, 60, 90, 180)
    for lead, nights in built.rows(
        "select f.arrival_date - f.booking_date, count(*) from core.fct_stay_nights f "
        "join core.dim_dates d on f.night_date = d.date_day "
        "where f.is_sold and f.is_stay_night and d.is_in_reporting_range group by 1"
    ):
        expected[max(b for b in bounds if lead >= b)] += nights
    assert [(b, n) for b, _label, n in found] == sorted(expected.items())
    labels = {b: label for b, label, _n in found}
    assert labels[0] == "0-6 days" and labels[180] == "180+ days"


def test_forecast_daily_is_otb_plus_last_years_pickup_capped_by_supply(built: Built) -> None:
    as_of = built.as_of
    pace = built.rows(
        "select stay_date, currency_code, otb_nights, otb_room_revenue, stly_otb_nights, "
        "stly_otb_room_revenue from marts.booking_pace where as_of_date = ? order by 1, 2",
        [as_of],
    )
    last_year = {
        (d, c): (n, r)
        for d, c, n, r in built.rows(
            "select date_day, currency_code, sum(nights_sold), sum(room_revenue_gross) "
            "from marts.sales_daily group by all"
        )
    }
    supply = dict(
        built.rows("select date_day, sum(nights_available) from marts.occupancy_daily group by 1")
    )
    by_day: dict[Any, list[tuple[Any, ...]]] = defaultdict(list)
    for row in pace:
        by_day[row[0]].append(row)
    expected = []
    for day, rows in sorted(by_day.items()):
        free = max(supply.get(day, 0) - sum(r[2] for r in rows), 0)
        before = 0
        for _d, currency, otb, otb_rev, stly, stly_rev in rows:
            ly_n, ly_r = last_year.get((day - timedelta(days=364), currency), (0, Decimal(0)))
            pickup = max(ly_n - stly, 0)
            pickup_cents = max(int((ly_r - stly_rev) * 100), 0)
            kept = min(pickup, max(free - before, 0))
            before += pickup
            revenue = otb_rev + (
                Decimal(pickup_cents * kept // pickup) / 100 if pickup else Decimal(0)
            )
            expected.append((day, currency, otb, otb + kept, revenue.quantize(Decimal("0.01"))))
    found = built.rows(
        "select stay_date, currency_code, otb_nights, forecast_nights, forecast_room_revenue "
        "from marts.forecast_daily order by 1, 2"
    )
    assert found == expected
    assert min(r[0] for r in found) == as_of
    # the forecast adds something, and never more than the free units
    assert sum(r[3] for r in found) > sum(r[2] for r in found)
    for day, rows in by_day.items():
        total = sum(f[3] for f in found if f[0] == day)
        assert total <= max(supply.get(day, 0), sum(r[2] for r in rows))


def test_reservoir_export_writes_what_the_feed_serves(built: Built, tmp_path: Any) -> None:
    out = tmp_path / "adr.csv"
    result = CliRunner().invoke(
        app,
        [
            "export",
            "adr_net",
            "--by",
            "channel",
            "--where",
            "park=1",
            "--format",
            "csv",
            "--out",
            str(out),
        ],
        env={"RESERVOIR_DATA_DIR": str(built.data_dir), "COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines[0] == "channel,currency,room_revenue_net,nights_sold,adr_net,channel_name"
    expected = built.rows(
        "select s.distribution_channel_id, s.currency_code, sum(s.room_revenue_net), "
        "sum(s.nights_sold), c.distribution_channel_name from marts.sales_daily s "
        "join core.dim_distribution_channels c using (distribution_channel_id) "
        "where s.location_id = 1 group by all order by 1, 2"
    )
    assert len(lines) - 1 == len(expected)
    for line, (channel, currency, revenue, nights, name) in zip(lines[1:], expected, strict=True):
        adr = (revenue / nights).quantize(Decimal("0.01"), rounding="ROUND_HALF_UP")
        assert line == f"{channel},{currency},{revenue},{nights},{adr},{name}"
    bad = CliRunner().invoke(
        app,
        ["export", "adr_net", "--by", "park;drop"],
        env={"RESERVOIR_DATA_DIR": str(built.data_dir), "COLUMNS": "200"},
    )
    assert bad.exit_code == 2 and "no dimension" in bad.output


def _sums() -> str:
    return ", ".join(f"sum({m})" for m in MEASURES.split(", "))
