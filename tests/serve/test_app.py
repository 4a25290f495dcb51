"""`reservoir serve`'s page over a real uvicorn: each filter changes the tiles to what a query on
the marts gives, names stand for codes, a month drills into its nights, bad filters get a 400,
and a run can publish a new warehouse while the app serves."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from tests.serve.conftest import Built
from tests.serve.expected import money, money_per, pct, ratio, sums
from tests.serve.server import serving
from warehouse.build import build_warehouse

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

_TILE = re.compile(
    r'<div class="tile" data-metric="([a-z_]+)">(.*?)</div></div>(?=<div class="tile"|</div>)', re.S
)
_VALUE = re.compile(r'<span class="tile-value">([^<]*)</span>')


@pytest.fixture(scope="module")
def app(built: Built) -> Iterator[httpx.Client]:
    with serving(built.warehouse) as base, httpx.Client(base_url=base, timeout=60) as client:
        yield client


def tiles(page: str) -> dict[str, list[str]]:
    block = page.split('<div class="tiles">', 1)[1].split("</section>", 1)[0]
    found: dict[str, list[str]] = {}
    for part in block.split('<div class="tile" data-metric="')[1:]:
        name = part.split('"', 1)[0]
        found[name] = [html.unescape(v) for v in _VALUE.findall(part)]
    return found


def expected_tiles(
    built: Built, lo: date, hi: date, filters: dict[str, list[Any]]
) -> dict[str, list[str]]:
    sold = sums(built, "marts.sales_daily", "nights_sold", [], lo, hi, filters)[()] or 0
    supply = sums(built, "marts.occupancy_daily", "nights_available", [], lo, hi, filters)[()] or 0
    per = {
        c: sums(built, "marts.sales_daily", c, ["currency"], lo, hi, filters)
        for c in (
            "room_revenue_net",
            "nights_sold",
            "commission_net",
            "room_revenue_after_commission_net",
        )
    }
    currencies = sorted(k[0] for k in per["room_revenue_net"])
    out = {"occupancy": [pct(ratio(sold, supply))]}
    out["room_revenue_net"] = [money(per["room_revenue_net"][(c,)], c) for c in currencies]
    out["adr_net"] = [
        _m(money_per(per["room_revenue_net"][(c,)], per["nights_sold"][(c,)]), c)
        for c in currencies
    ]
    out["revpar_net"] = [
        _m(money_per(per["room_revenue_net"][(c,)], supply), c) for c in currencies
    ]
    out["adr_after_commission_net"] = [
        _m(money_per(per["room_revenue_after_commission_net"][(c,)], per["nights_sold"][(c,)]), c)
        for c in currencies
    ]
    out["commission_net"] = [money(per["commission_net"][(c,)], c) for c in currencies]
    return out


def _m(value: Any, currency: str) -> str:
    return "–" if value is None else money(value, currency)


def default_range(as_of: date) -> tuple[date, date]:
    start = date(as_of.year - 1, as_of.month, 1)
    y, m = divmod(as_of.month - 1 + 4, 12)
    return start, date(as_of.year + y, m + 1, 1) - timedelta(days=1)


def test_the_default_page_shows_the_marts_figures_with_names(
    app: httpx.Client, built: Built
) -> None:
    page = app.get("/")
    assert page.status_code == 200
    lo, hi = default_range(built.as_of)
    assert tiles(page.text) == expected_tiles(built, lo, hi, {})
    for (name,) in built.rows("select location_name from core.dim_locations"):
        assert f">{name}</option>" in page.text
    # units are shown by the service's unit name, which may carry their park's code
    text = re.sub(r'<details class="owners-units">.*?</details>', "", page.text, flags=re.S)
    for (code,) in built.rows("select location_code from core.dim_locations"):
        assert code not in text  # parks by name, never by code
    assert page.text.count("data-figure=") == 20  # 7 + the areas: 2 supply, 6 guest mix, 5 more
    assert "Online travel agency" in page.text  # channels by name


FILTERS = [
    ("park", {"park": [1]}),
    ("two-parks", {"park": [2, 3]}),
    ("type", {"accommodation_type": [1006]}),
    ("channel", {"channel": [4]}),
    ("currency", {"currency": ["GBP"]}),
    ("park-and-channel", {"park": [3], "channel": [1]}),
]


@pytest.mark.parametrize(("label", "filters"), FILTERS, ids=[f[0] for f in FILTERS])
def test_each_filter_gives_the_marts_figures(
    app: httpx.Client, built: Built, label: str, filters: dict[str, list[Any]]
) -> None:
    lo, hi = built.as_of - timedelta(days=120), built.as_of + timedelta(days=30)
    params = [("from", lo.isoformat()), ("to", hi.isoformat())]
    params += [(k, str(v)) for k, vs in filters.items() for v in vs]
    page = app.get("/", params=params)
    assert page.status_code == 200, page.text
    shown, expected = tiles(page.text), expected_tiles(built, lo, hi, filters)
    assert shown == expected
    assert shown != tiles(app.get("/", params=params[:2]).text)  # the filter changed something


def test_a_month_drills_into_its_nights(app: httpx.Client, built: Built) -> None:
    month = date(built.as_of.year, built.as_of.month, 1) - timedelta(days=1)
    month = month.replace(day=1)
    page = app.get("/", params={"park": "1", "month": month.strftime("%Y-%m")})
    assert page.status_code == 200
    assert f"Nights of {month:%b %Y}" in page.text
    rows = re.findall(
        r'<td data-label="Night">([^<]*)</td><td data-label="Sold">([^<]*)</td>'
        r'<td data-label="Available">([^<]*)</td><td data-label="Occupancy">([^<]*)</td>',
        page.text,
    )
    sold = sums(
        built,
        "marts.sales_daily",
        "nights_sold",
        ["night"],
        month,
        month + timedelta(days=40),
        {"park": [1]},
    )
    supply = sums(
        built,
        "marts.occupancy_daily",
        "nights_available",
        ["night"],
        month,
        month + timedelta(days=40),
        {"park": [1]},
    )
    nights = sorted(d for (d,) in supply if d.month == month.month)
    assert [r[0] for r in rows] == [f"{d:%a %d %b}" for d in nights]
    for (_night, s, a, occ), d in zip(rows, nights, strict=True):
        assert (s, a) == (f"{sold.get((d,), 0):,}", f"{supply[(d,)]:,}")
        assert occ == pct(ratio(sold.get((d,), 0), supply[(d,)]))
    # the month table links each month to its nights, keeping the filters
    assert f"park=1&amp;month={month:%Y-%m}" in app.get("/", params={"park": "1"}).text


@pytest.mark.parametrize(
    "query",
    [
        "park=L001",
        "from=2026-13-01",
        "currency=EUR&currency=GBP",
        "month=last",
        "booking_window=1",
        "x=1",
    ],
)
def test_bad_filters_get_a_400_page(app: httpx.Client, query: str) -> None:
    got = app.get("/?" + query)
    assert got.status_code == 400
    assert 'role="alert"' in got.text


def test_a_run_publishes_while_the_app_serves(app: httpx.Client, built: Built) -> None:
    """The app holds no connection between requests: a build publishes (renames) its new file
    while the page is being served, and the next request reads the new build."""
    before = built.rows("select build_id from meta.build_settings")[0][0]
    assert app.get("/").status_code == 200
    result = build_warehouse(built.data_dir)
    after = built.rows("select build_id from meta.build_settings")[0][0]
    assert after != before and result.path == built.warehouse
    page = app.get("/")
    assert page.status_code == 200
    lo, hi = default_range(built.as_of)
    assert tiles(page.text) == expected_tiles(built, lo, hi, {})


def test_static_scripts_are_served(app: httpx.Client) -> None:
    page = app.get("/").text
    src = re.search(r'<script src="(/static/plotly-[^"]+)"', page)
    assert src is not None
    js = app.get(src.group(1))
    assert (
        js.status_code == 200 and "plotly" in js.text[:2000].lower() and len(js.content) > 1_000_000
    )
    assert app.get("/static/app.js").status_code == 200
