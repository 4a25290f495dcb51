"""The page's area sections over a real uvicorn: sellable supply, orphan nights, allotment
pickup, owner statements, ancillary revenue, channel net revenue and guest mix show, cell for
cell, what queries on their marts give, for each page filter the mart has; a section says so
when the reader picked a filter its mart does not have."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from tests.serve import expected_areas
from tests.serve.conftest import Built
from tests.serve.server import serving
from tests.serve.test_app import default_range

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

AREAS = ("supply", "orphans", "allotments", "owners", "ancillary", "channel-net", "guests")
# the filters each section ignores (the page says so when one of them is picked)
IGNORES = {
    "supply": {"channel", "currency"},
    "orphans": {"channel", "currency"},
    "allotments": {"currency"},
    "owners": {"channel"},
    "ancillary": {"type", "channel"},
    "channel-net": {"park", "type"},
    "guests": {"park", "type", "channel", "currency"},
}
NAMES = {"park": "park", "accommodation_type": "type", "channel": "channel", "currency": "currency"}
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)


@pytest.fixture(scope="module")
def app(built: Built) -> Iterator[httpx.Client]:
    with serving(built.warehouse) as base, httpx.Client(base_url=base, timeout=60) as client:
        yield client


def section(page: str, key: str) -> str:
    return page.split(f'<section id="{key}"', 1)[1].split("</section>", 1)[0]


def section_tables(page: str, key: str) -> list[list[list[str]]]:
    """Each table of a section as rows of cell texts."""
    out = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", section(page, key), re.S):
        out.append(
            [
                [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in _CELL.findall(row)]
                for row in _ROW.findall(body)
            ]
        )
    return out


def figures(page: str, key: str) -> list[dict[str, Any]]:
    found = re.findall(
        r'<script type="application/json" id="fig\d+">(.*?)</script>', section(page, key), re.S
    )
    return [json.loads(f.replace("<\\/", "</")) for f in found]


def expected(built: Built, lo: date, hi: date, filters: dict[str, list[Any]]) -> dict[str, Any]:
    found = expected_areas.tables(built, lo, hi, filters, built.as_of)
    return {k: [t for t in tables if t] for k, tables in found.items()}


CASES = [
    ("none", {}),
    ("park", {"park": [1]}),
    ("type", {"accommodation_type": [1006]}),
    ("channel", {"channel": [4]}),
    ("currency", {"currency": ["GBP"]}),
    ("park-and-channel", {"park": [3], "channel": [1]}),
]


@pytest.mark.parametrize(("label", "filters"), CASES, ids=[c[0] for c in CASES])
def test_each_area_shows_its_marts_figures_for_the_filters_it_has(
    app: httpx.Client, built: Built, label: str, filters: dict[str, list[Any]]
) -> None:
    lo, hi = default_range(built.as_of)
    params = [("from", lo.isoformat()), ("to", hi.isoformat())]
    params += [(k, str(v)) for k, vs in filters.items() for v in vs]
    page = app.get("/", params=params)
    assert page.status_code == 200, page.text
    want = expected(built, lo, hi, filters)
    for key, tables in want.items():
        assert section_tables(page.text, key) == tables, (label, key)
    picked = {NAMES[k] for k in filters}
    for key in AREAS:
        note = re.search(r'data-ignored="([^"]*)"', section(page.text, key))
        ignored = set(note.group(1).split(",")) if note else set()
        assert ignored == picked & IGNORES[key], (label, key)
    if not filters:  # the comparison saw every area with figures
        assert all(want[k] for k in want), {k: len(v) for k, v in want.items()}
        assert len(want["owners"]) == 2 and len(want["owners"][1]) > 3


def test_the_guest_mix_shows_each_split_as_its_share_of_stays(
    app: httpx.Client, built: Built
) -> None:
    lo, hi = built.as_of - timedelta(days=200), built.as_of
    page = app.get("/", params={"from": lo.isoformat(), "to": hi.isoformat(), "park": "1"})
    assert page.status_code == 200
    text = re.sub(r"<[^>]+>", "", section(page.text, "guests"))
    assert expected_areas.repeat_share(built, lo, hi) in html.unescape(text)
    shown = figures(page.text, "guests")
    dims = (
        "guest_type",
        "country",
        "party_size",
        "length_of_stay",
        "booking_window",
        "arrival_weekday",
    )
    assert len(shown) == len(dims)
    for fig, dim in zip(shown, dims, strict=True):
        (trace,) = fig["data"]
        want = expected_areas.guest_shares(built, lo, hi, dim)
        assert dict(zip(trace["x"], trace["y"], strict=True)) == {
            b: pytest.approx(float(v), rel=1e-12) for b, v in want.items()
        }, dim


def test_the_sellable_occupancy_chart_equals_the_supply_mart(
    app: httpx.Client, built: Built
) -> None:
    """Sellable occupancy's chart equals the supply table: the same months, the same ratio."""
    lo, hi = default_range(built.as_of)
    page = app.get("/").text
    occupancy, _out_of_sale = figures(page, "supply")
    sellable = occupancy["data"][1]
    rows = built.rows(
        "select date_trunc('month', date_day)::date, sum(nights_sold), sum(sellable_nights) "
        "from marts.occupancy_daily where date_day between ? and ? group by 1 order by 1",
        [lo, hi],
    )
    assert sellable["x"] == [m.isoformat() for m, _s, _n in rows]
    assert sellable["y"] == [pytest.approx(s / n, rel=1e-12) for _m, s, n in rows]
