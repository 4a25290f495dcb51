"""What `reservoir run` reports: every table landed, requests counted once, KPIs, the cap kept."""

from __future__ import annotations

from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest

from tests.e2e.conftest import PipelineRun

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

LAKE_TABLES = {
    "accommodation_type_capacities", "accommodation_types", "availability", "availability_prices",
    "bill_lines", "cash_accounts", "cash_clearances", "companies", "customer_merges", "customers",
    "distribution_channels", "journal_entries", "journal_reports", "locations", "rate_options",
    "rate_types", "rates", "reservation_subjects", "reservations", "reserved_resources", "units",
    "distribution_channel_commissions", "distribution_channel_cancellation_addons", "addons",
    "addon_prices", "owners", "owner_contracts",
}  # fmt: skip


def test_every_table_lands_and_requests_are_counted_once(full_run: PipelineRun) -> None:
    summary = full_run.summary
    assert set(summary.tables) == LAKE_TABLES
    world = full_run.handle.world
    assert summary.tables["reservations"].rows == len(world.keys("reservations"))
    assert summary.tables["bill_lines"].rows == len(world.keys("billlines"))
    assert summary.tables["units"].rows == len(world.keys("units"))  # archived units included
    assert summary.tables["owners"].rows == len(world.keys("owners"))
    assert summary.tables["addons"].rows == len(world.keys("addons"))
    served = full_run.handle.stats()
    assert summary.requests > 0
    # Every request the assets report was served; the few more the sandbox saw are token
    # requests and the warehouse-free event reads, which the asset metadata does not count.
    assert summary.requests <= served["requests"] <= summary.requests + 40


def test_headline_kpis_and_models(full_run: PipelineRun) -> None:
    names = [name for name, _ in full_run.summary.kpis]
    assert any(name.startswith("occupancy") for name in names)
    assert sum(name.startswith("ADR") for name in names) >= 2  # one per currency
    assert {"occupancy_daily", "revenue_daily", "booking_pace"} <= set(full_run.summary.models)


def test_the_concurrency_cap_is_never_exceeded(full_run: PipelineRun) -> None:
    stats = full_run.handle.stats()
    assert 1 <= stats["peakInFlightPerClient"] <= 15
    assert stats["throttled"] == 0  # the client never provoked a 429


def test_window_kpis_have_one_definition(full_run: PipelineRun) -> None:
    """`marts.kpi_window` (what the run summary and the dashboard read) equals the definitions
    computed here from the daily marts: occupancy and RevPAR over every unit's nights available,
    ADR over the currency's nights sold."""
    import duckdb

    from warehouse.kpis import headline

    con = duckdb.connect(str(full_run.settings.warehouse_path), read_only=True)
    try:
        today = full_run.handle.world.now.date()
        lo, hi = today - timedelta(days=30), today - timedelta(days=1)
        rows = con.execute(
            "select currency_code, nights_available, nights_sold, occupancy, room_revenue_net, "
            "currency_nights_sold, adr_net, revpar_net, room_revenue_gross, revpar_gross "
            "from marts.kpi_window(?, ?)",
            [lo, hi],
        ).fetchall()
        sold, available = con.execute(
            "select sum(nights_sold), sum(nights_available) from marts.occupancy_daily "
            "where date_day between ? and ?",
            [lo, hi],
        ).fetchone()
        revenue = dict(
            (c, (r, n, a, g))
            for c, r, n, a, g in con.execute(
                "select currency_code, sum(room_revenue_net), sum(nights_sold), "
                "sum(nights_available), sum(room_revenue_gross) from marts.revenue_daily "
                "where date_day between ? and ? group by 1",
                [lo, hi],
            ).fetchall()
        )
        lines = dict(headline(con, today.isoformat()))
    finally:
        con.close()
    assert {r[0] for r in rows} == set(revenue) == {"EUR", "GBP"}
    cent = Decimal("0.01")
    for currency, avail, nights, occupancy, net, c_nights, adr, revpar, gross, rp_gross in rows:
        assert (avail, nights) == (available, sold)
        assert occupancy == pytest.approx(sold / available)
        # every currency has a row for every night: its supply is all of it
        assert (net, c_nights, available, gross) == revenue[currency]
        assert 0 < net < gross
        assert adr == (net / c_nights).quantize(cent, ROUND_HALF_UP)
        assert revpar == (net / available).quantize(cent, ROUND_HALF_UP)
        assert rp_gross == (gross / available).quantize(cent, ROUND_HALF_UP)
    occupancy_line = next(v for k, v in lines.items() if k.startswith("occupancy, last"))
    assert occupancy_line == f"{sold / available:.1%}"
