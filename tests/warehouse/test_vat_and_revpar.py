"""Gross and net of VAT per bill line and RevPAR on the full supply of every currency
(docs/metrics.md: "Gross and net of VAT", "Aggregating RevPAR")."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from tests.warehouse.scenarios import GBP_CHANNEL, Batch
from warehouse.build import build_warehouse
from warehouse.checks import run_checks

JUNE = (date(2025, 6, 1), date(2025, 6, 30))


def _strs(rows: list[tuple[object, ...]]) -> list[tuple[str, ...]]:
    return [tuple(str(v) for v in r) for r in rows]


def test_worked_example_of_the_dictionary(lake, query, tmp_path) -> None:
    """3 nights billed as one rent line of 300.00 at 9 % VAT: VAT 24.77, net 275.23."""
    batch = Batch().reference(units=1)
    batch.reservation(1, "2025-02-01", "2025-02-04", unit_id=1000, nightly="100.00")
    batch.tables["bill_lines"][0]["vat_rate"] = 9.0
    batch.bill_line(1, bill_line_type=60, total="24.77")  # the bill's VAT line
    batch.flush(lake, kind="full")
    result = build_warehouse(tmp_path)
    assert query("select vat_cents from core.fct_bill_lines where bill_line_type = 10") == [(2477,)]
    assert _strs(
        query("select room_revenue, room_revenue_net from core.fct_stay_nights order by night_date")
    ) == [("100.00", "91.75"), ("100.00", "91.74"), ("100.00", "91.74")]
    assert _strs(
        query(
            "select room_revenue_gross, room_revenue_net, room_vat, adr_gross, adr_net "
            "from marts.revenue_daily where nights_sold > 0 order by date_day"
        )
    ) == [
        ("100.00", "91.75", "8.25", "100.00", "91.75"),
        ("100.00", "91.74", "8.26", "100.00", "91.74"),
        ("100.00", "91.74", "8.26", "100.00", "91.74"),
    ]
    window = query(
        "select room_revenue_gross, room_revenue_net, adr_gross, adr_net, revpar_net "
        "from marts.kpi_window(date '2025-02-01', date '2025-02-03')"
    )
    assert _strs(window) == [("300.00", "275.23", "100.00", "91.74", "91.74")]
    assert all(c.passed for c in run_checks(result.path, {"bill_vat_matches_vat_line"}))


def test_net_is_gross_less_each_lines_vat(lake, query, tmp_path) -> None:
    """A discount, an extra at another rate, tourist tax and agent commission with its VAT."""
    batch = Batch().reference(units=2)
    batch.reservation(
        1, "2025-03-01", "2025-03-03", channel=GBP_CHANNEL, unit_id=1000, nightly="109.00"
    )
    batch.tables["bill_lines"][0]["vat_rate"] = 9.0
    lines = (
        # type, resource type, total, VAT rate, payer: VAT 18.00 (rent), -2.48, 10.50, 0
        (10, "SPECIAL", "-30.00", 9.0, "CUSTOMER"),
        (20, "EXTRA", "60.50", 21.0, "CUSTOMER"),
        (250, None, "5.00", 0.0, "CUSTOMER"),
        (100, None, "8.00", 21.0, "AGENT"),
        (110, None, "1.68", None, "AGENT"),
    )
    for kind, resource_type, total, rate, payer in lines:
        batch.bill_line(
            1,
            bill_line_type=kind,
            resource_type=resource_type,
            total=total,
            vat_rate=rate,
            payer_type=payer,
        )
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path)
    vat = dict(query("select bill_line_type, sum(vat_cents) from core.fct_bill_lines group by 1"))
    assert vat == {10: 1800 - 248, 20: 1050, 70: 0, 100: 0, 110: 168, 250: 0}
    row = query(
        "select sum(room_revenue_gross), sum(room_revenue_net), sum(room_vat), "
        "sum(total_revenue_gross), sum(total_revenue_net), sum(total_vat), "
        "sum(commission_gross), sum(commission_net), "
        "sum(room_revenue_after_commission_gross), sum(room_revenue_after_commission_net) "
        "from marts.revenue_daily where currency_code = 'GBP'"
    )
    assert _strs(row) == [
        (
            "188.00",  # 218.00 - 30.00
            "172.48",  # 188.00 - (18.00 - 2.48)
            "15.52",
            "248.50",  # + 60.50 extra; tourist tax is not revenue
            "222.48",  # 172.48 + 50.00
            "26.02",
            "9.68",
            "8.00",
            "178.32",
            "164.48",
        )
    ]
    mix = query(
        "select room_revenue_gross, room_revenue_net, commission_gross, commission_net "
        "from marts.channel_mix_monthly"
    )
    assert _strs(mix) == [("188.00", "172.48", "9.68", "8.00")]


def test_revpar_of_a_rarely_sold_currency_uses_the_full_supply(lake, query, tmp_path) -> None:
    """10 units in June; EUR sells one night every night, GBP three nights at 120.00: the GBP
    RevPAR of the month is 360.00 / 300 = 1.20, not 360.00 over the 30 nights GBP sold on."""
    batch = Batch().reference(units=10)
    for day in range(1, 31):
        arrival = date(2025, 6, day)
        departure = date(2025, 6, day + 1) if day < 30 else date(2025, 7, 1)
        batch.reservation(day, arrival.isoformat(), departure.isoformat(), unit_id=1000)
    for rid, day in ((101, 3), (102, 14), (103, 27)):
        batch.reservation(
            rid,
            f"2025-06-{day:02d}",
            f"2025-06-{day + 1:02d}",
            channel=GBP_CHANNEL,
            unit_id=1001,
            nightly="120.00",
        )
    batch.flush(lake, kind="full")
    build_warehouse(tmp_path, reporting_range=JUNE)
    monthly = query(
        "select currency_code, count(*), sum(nights_available), sum(room_revenue_net), "
        "sum(nights_sold) from marts.revenue_daily group by 1 order by 1"
    )
    assert _strs(monthly) == [
        ("EUR", "30", "300", "3000.00", "30"),
        ("GBP", "30", "300", "360.00", "3"),
    ]
    revpar = {c: r / Decimal(a) for c, _n, a, r, _s in monthly}
    assert revpar["GBP"] == Decimal("1.20")
    # a night GBP did not sell has its row, with the supply and no revenue
    assert _strs(
        query(
            "select nights_available, room_revenue_gross, revpar_gross from marts.revenue_daily "
            "where currency_code = 'GBP' and date_day = date '2025-06-04'"
        )
    ) == [("10", "0.00", "0.00")]
    window = dict(
        query(
            "select currency_code, revpar_net from marts.kpi_window(date '2025-06-01', "
            "date '2025-06-30')"
        )
    )
    assert window == {"EUR": Decimal("10.00"), "GBP": Decimal("1.20")}
