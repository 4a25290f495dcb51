"""`reservoir serve` and the offline snapshot in a real headless Chromium, at a phone's width
(390 px) and a desktop's (1600 px): the filters are applied through the form, the figures shown
equal queries on the marts, every chart is drawn, nothing sticks out of the viewport, and no
console error or CSP refusal is logged. Screenshots are kept in the test's tmp dir."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from pipelines.dashboard import build_dashboard
from tests.serve.browser import CHROMIUM, Browser, browser
from tests.serve.conftest import Built
from tests.serve.expected import pct, ratio, sums
from tests.serve.server import serving
from tests.serve.test_app import default_range

pytestmark = [
    pytest.mark.chromium,
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.xdist_group("serve"),
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"{CHROMIUM} is missing; run scripts/ensure-chromium.sh (as root) to install it",
    ),
]
WIDTHS = (390, 1600)

# Elements whose box passes the viewport's left or right edge.
OVERFLOW = """
(() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    // plotly's own text-measuring node sits off-screen on purpose
    if (el.closest('#js-plotly-tester, .plotly-notifier') || el.tagName === 'SCRIPT') continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > width + 1 || r.left < -1) out.push(el.tagName + '.' + el.getAttribute('class') + ' ' + Math.round(r.left) + '-' + Math.round(r.right));
  }
  return {width, scroll: document.documentElement.scrollWidth, out: out.slice(0, 10)};
})()
"""
CHARTS = (
    "[document.querySelectorAll('[data-figure]').length, "
    "document.querySelectorAll('[data-figure] .main-svg').length > 0 && "
    "[...document.querySelectorAll('[data-figure]')].every(e => e.querySelector('.main-svg'))]"
)
OCCUPANCY_TILE = "document.querySelector('[data-metric=occupancy] .tile-value').textContent"


@pytest.fixture(scope="module")
def chrome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    with browser(tmp_path_factory.mktemp("chromium-profile")) as b:
        yield b


def _fits(b: Browser) -> None:
    found = b.eval(OVERFLOW)
    assert found["scroll"] <= found["width"], found
    assert found["out"] == [], found


def _keep(png: Path, name: str) -> None:
    """Screenshots also land in $TMPDIR/reservoir-serve-shots for a person to look at."""
    shots = Path("/tmp/reservoir-serve-shots")
    shots.mkdir(exist_ok=True)
    shutil.copy(png, shots / name)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_app_filters_fit_and_match_the_marts(
    chrome: Browser, built: Built, tmp_path: Path, width: int
) -> None:
    with serving(built.warehouse) as base:
        chrome.size(width, 900)
        chrome.open(base + "/")
        assert chrome.console == []
        assert chrome.eval(CHARTS) == [6, True]
        _fits(chrome)
        lo, hi = default_range(built.as_of)
        sold = sums(built, "marts.sales_daily", "nights_sold", [], lo, hi)[()]
        supply = sums(built, "marts.occupancy_daily", "nights_available", [], lo, hi)[()]
        assert chrome.eval(OCCUPANCY_TILE) == pct(ratio(sold, supply))
        # apply a filter as a reader does: pick a park by its name in the form, press Apply
        (park_id, park_name) = built.rows(
            "select location_id, location_name from core.dim_locations order by 1 desc limit 1"
        )[0]
        chrome.call(
            "Runtime.evaluate",
            expression=(
                "const s = document.querySelector('select[name=park]');"
                f"for (const o of s.options) o.selected = (o.textContent === {park_name!r});"
                "document.documentElement.removeAttribute('data-charts');"
                "document.querySelector('.filters button[type=submit]').click();"
            ),
        )
        chrome.open_wait()
        assert f"park={park_id}" in chrome.eval("location.search")
        sold = sums(built, "marts.sales_daily", "nights_sold", [], lo, hi, {"park": [park_id]})[()]
        supply = sums(
            built, "marts.occupancy_daily", "nights_available", [], lo, hi, {"park": [park_id]}
        )[()]
        assert chrome.eval(OCCUPANCY_TILE) == pct(ratio(sold, supply))
        assert chrome.eval(CHARTS) == [6, True]
        _fits(chrome)
        png = chrome.screenshot(tmp_path / f"app-{width}.png")
        _keep(png, f"app-{width}.png")
        # drill into the month before the as-of date: one more chart, still inside the screen
        month = (built.as_of.replace(day=1) - timedelta(days=1)).strftime("%Y-%m")
        chrome.open(f"{base}/?park={park_id}&month={month}")
        assert chrome.eval(CHARTS) == [7, True]
        _fits(chrome)
        _keep(chrome.screenshot(tmp_path / f"nights-{width}.png"), f"nights-{width}.png")
        assert chrome.console == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_snapshot_draws_offline(
    chrome: Browser, built: Built, tmp_path: Path, width: int
) -> None:
    page = build_dashboard(built.warehouse, tmp_path / "dashboard.html")
    chrome.size(width, 900)
    chrome.open(page.as_uri())
    assert chrome.eval(CHARTS) == [6, True]
    _fits(chrome)
    assert chrome.console == []
    _keep(chrome.screenshot(tmp_path / f"snapshot-{width}.png"), f"snapshot-{width}.png")
