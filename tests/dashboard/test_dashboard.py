"""The HTML dashboard: sections, figures from the marts, empty marts, escaping, no network."""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.dashboard import DashboardError, build_dashboard
from tests.dashboard.conftest import (
    GBP_PRICE,
    TODAY,
    TYPES,
    days,
    expected,
    make_warehouse,
    sold,
)

SECTION_IDS = ("kpis", "occupancy", "revenue", "pace", "channels", "cancellations", "rates")


def _pct(value: Decimal) -> str:
    return f"{(value * 100).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)} %"


def _money(value: Decimal, currency: str) -> str:
    return f"{currency} {value.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"


@pytest.fixture
def page(warehouse: Path, tmp_path: Path) -> str:
    out = build_dashboard(warehouse, tmp_path / "out" / "dashboard.html", today=TODAY)
    assert out == tmp_path / "out" / "dashboard.html"
    return out.read_text(encoding="utf-8")


def test_every_section_is_there_with_a_heading(page: str) -> None:
    for key in SECTION_IDS:
        assert f'<section id="{key}" aria-labelledby="{key}-h">' in page
        assert f'id="{key}-h"' in page
    assert "No data" not in page


def test_kpi_tiles_show_occupancy_adr_and_revpar_from_the_marts(page: str) -> None:
    want = expected()
    tiles = page.split('<div class="tiles">', 1)[1].split("</section>", 1)[0]
    assert _pct(want.occupancy_last_30) in tiles
    assert _pct(want.occupancy_next_30) in tiles
    assert _money(want.adr_eur_last_30, "EUR") in tiles
    assert _money(want.adr_gbp_last_30, "GBP") in tiles
    assert _money(want.revpar_eur_next_30, "EUR") in tiles
    # the concrete numbers, so a wrong generator in the fixture cannot hide a wrong page
    assert 'Last 30 days<span class="dates">16 May – 14 Jun 2025</span>' in tiles
    assert "86.7 %" in tiles  # (10 Fri/Sat nights x 15 + 20 x 12) / 450


def test_money_is_never_added_across_currencies(page: str) -> None:
    revenue = page.split('<section id="revenue"', 1)[1].split("</section>", 1)[0]
    assert "<h3>EUR</h3>" in revenue and "<h3>GBP</h3>" in revenue
    assert "ADR, RevPAR and TRevPAR per night in EUR" in revenue
    assert "GBP 85.25" in revenue  # the GBP ADR, untouched by the EUR nights
    channels = page.split('<section id="channels"', 1)[1].split("</section>", 1)[0]
    # GBP revenue share is within GBP: the one GBP channel has all of it
    row = re.search(r"<td>UKTRAVEL</td><td>GBP</td>(.*?)</tr>", channels)
    assert row is not None
    assert '<td class="num">100.0 %</td>' in row.group(1)


def test_heatmap_cells_carry_the_figures_in_tooltips(page: str) -> None:
    occupancy = page.split('<section id="occupancy"', 1)[1].split("</section>", 1)[0]
    assert "DUNE&lt;&amp;&gt; · Bungalow &lt;b&gt;4p&lt;/b&gt;" in occupancy
    assert "Sat 14 Jun 2025\nOccupancy 100.0 %\n10 of 10 nights sold</title>" in occupancy
    assert "Mon 16 Jun 2025\nOccupancy 40.0 %\n2 of 5 nights sold, 1 owner/hold" in occupancy
    assert "<title id=" in occupancy and "<desc id=" in occupancy
    assert 'class="axis-label"' in occupancy


def _section(page: str, key: str) -> str:
    return page.split(f'<section id="{key}"', 1)[1].split("</section>", 1)[0]


def test_pace_sums_nights_across_currency_rows_and_keeps_money_apart(page: str) -> None:
    pace = _section(page, "pace")
    assert "snapshot of Sun 15 Jun 2025" in pace
    next_30 = list(days(TODAY, TODAY + timedelta(29)))
    otb = sum(sold(code, d) for code, _n, _c in TYPES for d in next_30)  # EUR s-1 + GBP 1
    stly = sum(max(sold(code, d) - 3, 0) for code, _n, _c in TYPES for d in next_30)
    row = re.search(r"<td>Next 30 days</td>((?:<td class=\"num\">[^<]*</td>)+)</tr>", pace)
    assert row is not None
    cells = re.findall(r">([^<]*)</td>", row.group(1))
    assert cells[:2] == [f"{otb:,}", f"{stly:,}"]
    gbp = Decimal(len(next_30) * len(TYPES)) * GBP_PRICE
    assert f'<td>Next 30 days</td><td>GBP</td><td class="num">{_money(gbp, "GBP")}</td>' in pace


def test_cancellations_are_reweighted_across_locations(page: str) -> None:
    cancellations = _section(page, "cancellations")
    # June: 46 + 10 created, 4 + 3 cancelled; lead (40 x 30 + 10 x 60) / 50; ALOS 300 / 50
    cells = ["56", "7", "12.5 %", "4", "2", "36.0", "6.00"]
    want = "<td>Jun 2025</td>" + "".join(f'<td class="num">{c}</td>' for c in cells)
    assert want in cancellations
    assert "Jul 2025" not in cancellations  # after today


def test_rates_compare_list_and_realised_price_and_count_availability_once(page: str) -> None:
    rates = _section(page, "rates")
    assert "<td>DUNE&lt;&amp;&gt; · Chalet 6p</td><td>Early booker</td><td>EUR</td>" in rates
    early = re.search(r"<td>Early booker</td><td>EUR</td>(.*?)</tr>", rates)
    assert early is not None and '<td class="num">-' in early.group(1)
    left = sum(10 - sold("BUNG4", d) for d in days(TODAY, TODAY + timedelta(29)))
    assert (
        f'<td>DUNE&lt;&amp;&gt; · Bungalow &lt;b&gt;4p&lt;/b&gt;</td><td class="num">{left}</td>'
        in rates
    )
    assert "List price vs realised ADR" in rates


def test_ids_are_shown_when_the_dimensions_are_missing(tmp_path: Path) -> None:
    path = make_warehouse(tmp_path / "warehouse.duckdb", dimensions=False)
    page = build_dashboard(path, tmp_path / "d.html", today=TODAY).read_text("utf-8")
    assert "DUNE&lt;&amp;&gt; · BUNG4" in _section(page, "occupancy")
    assert "<td>type 1</td><td>rate type 2</td>" in _section(page, "rates")


def test_page_is_self_contained_and_escaped(page: str) -> None:
    assert "<script" not in page.lower()
    assert "DUNE<&>" not in page and "<b>4p" not in page
    assert "Content-Security-Policy" in page
    external = re.findall(r"(?:src|href)\s*=\s*[\"']?(?:https?:)?//", page)
    assert external == []
    urls = set(re.findall(r"https?://[^\s\"'<>]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}


def test_empty_marts_show_no_data(tmp_path: Path) -> None:
    warehouse = make_warehouse(tmp_path / "warehouse.duckdb", empty=True)
    page = build_dashboard(warehouse, tmp_path / "d.html", today=TODAY).read_text("utf-8")
    for key in SECTION_IDS[1:]:
        section = page.split(f'<section id="{key}"', 1)[1].split("</section>", 1)[0]
        assert "No data" in section, key
    assert "no occupancy data" in page and "no revenue data" in page


def test_a_warehouse_without_marts_still_renders(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(path)).close()
    page = build_dashboard(path, tmp_path / "d.html", today=date(2025, 1, 1)).read_text("utf-8")
    assert page.count("No data") == len(SECTION_IDS) - 1


def test_a_missing_column_is_reported_in_its_section(tmp_path: Path) -> None:
    path = make_warehouse(tmp_path / "warehouse.duckdb")
    with duckdb.connect(str(path)) as con:
        con.execute("alter table marts.cancellations_monthly drop column reservations_declined")
    page = build_dashboard(path, tmp_path / "d.html", today=TODAY).read_text("utf-8")
    cancellations = page.split('<section id="cancellations"', 1)[1].split("</section>", 1)[0]
    assert (
        "marts.cancellations_monthly has none of the columns reservations_declined" in cancellations
    )
    assert '<section id="occupancy"' in page and "Chalet 6p" in page


def test_the_warehouse_is_opened_read_only(warehouse: Path, tmp_path: Path) -> None:
    # a second read-only reader (an analyst's `reservoir sql`) does not block the build
    with duckdb.connect(str(warehouse), read_only=True):
        build_dashboard(warehouse, tmp_path / "d.html", today=TODAY)
    assert not list(tmp_path.glob(".d.html.*"))  # no temp file left behind


def test_a_missing_warehouse_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(DashboardError, match="reservoir run"):
        build_dashboard(tmp_path / "nope.duckdb", tmp_path / "d.html", today=TODAY)
    assert not (tmp_path / "nope.duckdb").exists()


def test_channel_mix_table_shows_each_channels_own_nights(page: str, warehouse: Path) -> None:
    """Nights and revenue per channel in the table equal the mart's sums for the months shown
    (a loop variable once replaced the column, and every channel showed the same nights)."""
    section = page.split('<section id="channels"', 1)[1].split("</section>", 1)[0]
    table = section.split("<table", 1)[1]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        months = re.search(r"Stay months (\w+ \d{4}) – (\w+ \d{4})", table)
        assert months is not None
        rows = con.execute(
            "select distribution_channel_code, currency_code, sum(nights_sold), "
            "sum(room_revenue_net) from marts.channel_mix_monthly "
            "where strftime(month_start, '%b %Y') in (?, ?) or month_start between "
            "strptime(?, '%b %Y') and strptime(?, '%b %Y') group by all",
            [months[1], months[2], months[1], months[2]],
        ).fetchall()
    finally:
        con.close()
    assert len({n for _c, _cur, n, _r in rows}) > 1  # the channels differ
    cells = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    shown = {
        re.sub(r"<[^>]+>", "", c.split("</td>")[0]).strip(): [
            re.sub(r"<[^>]+>", "", x).strip() for x in c.split("</td>")
        ]
        for c in cells
        if "<td" in c
    }
    for code, currency, nights, revenue in rows:
        row = shown[code]
        assert f"{nights:,}" in row, (code, row)
        assert _money(Decimal(revenue), currency) in row, (code, row)
