"""Incremental runs equal a fresh full load when the service's clock moves, over HTTP.

A sandbox served over HTTP is read like an external service: no run is told the date, so each
takes it from the service (its responses' Date header), and the clock moves only through the
admin API (`reservoir sandbox advance`). Data dir A follows it with incremental runs; a fresh
full load into a new dir is the reference: every lake table's current state and every mart must
be identical. Before the one as-of clock, the runs took this machine's date: no day roll after an
advance, and cash clearances filtered from the machine's date were missed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest

from assets.modes import apply_changes
from assets.run_report import RunReport
from assets.settings import IngestSettings
from lake.state import read_as_of
from lake.store import Lake
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from tests.incremental.helpers import lake_differences, mart_differences, sandbox_opener
from warehouse.refresh import refresh_warehouse

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

SETTINGS = IngestSettings(horizon_days=60)  # no date: the service's


@dataclass
class Served:
    handle: SandboxHandle
    opener: Any
    tmp: Path

    def advance(self, hours: int) -> None:
        """Like `reservoir sandbox advance`: the admin API of the running sandbox."""
        response = httpx.post(
            f"{self.handle.admin_url}/advance", params={"hours": hours}, timeout=600
        )
        response.raise_for_status()

    def run(self, data_dir: Path) -> RunReport:
        """One run (a bootstrap into an empty dir) and the warehouse refresh after it."""
        report = apply_changes(Lake(data_dir / "lake"), self.opener, SETTINGS)
        refresh_warehouse(data_dir)
        return report

    def service_date(self) -> Any:
        with self.handle.world.lock:
            return self.handle.world.now.date()

    def assert_equals_a_fresh_full_load(self, dir_a: Path, name: str) -> None:
        dir_b = self.tmp / name
        assert self.run(dir_b).mode == "bootstrap"
        for d in (dir_a, dir_b):
            recorded = read_as_of(Lake(d / "lake"))
            assert recorded is not None and recorded.business_date == self.service_date()
        assert lake_differences(Lake(dir_a / "lake"), Lake(dir_b / "lake")) == {}
        assert mart_differences(dir_a / "warehouse.duckdb", dir_b / "warehouse.duckdb") == {}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with run_sandbox(SandboxSettings(seed=13, scale="small")) as handle:
        yield Served(handle, sandbox_opener(handle, max_retries=12), tmp_path)


def _follow(s: Served, steps: list[int]) -> Path:
    """Bootstrap A, then per step: advance the service's clock that many hours, one run."""
    dir_a = s.tmp / "a"
    assert s.run(dir_a).mode == "bootstrap"
    for hours in steps:
        before = s.service_date()
        s.advance(hours)
        report = s.run(dir_a)
        assert report.mode == "incremental"
        assert report.as_of is not None and report.as_of.business_date == s.service_date()
        assert report.day_rolled == (s.service_date() != before)
        assert report.diffs["cash_clearances"]["new"] > 0  # a day's clearances, read again
    return dir_a


# The default suite's depth: one day roll over HTTP, the date taken from the service (the day
# rolls, the clearances are read again, the lake and marts equal a fresh full load, the pace
# judges past nights from recorded versions). `make chaos` adds a second roll from the state the
# first one left, three rolls, and one run of 72 hours; the default suite rolls an incremental
# state again in tests/incremental/test_inplace_equivalence.py (30 hours, then a new day).
@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([24], id="one-roll"),
        pytest.param([24, 24], id="two-rolls", marks=pytest.mark.chaos),
    ],
)
def test_daily_runs_equal_a_full_load(served: Served, steps: list[int]) -> None:
    dir_a = _follow(served, steps)
    served.assert_equals_a_fresh_full_load(dir_a, "fresh")
    # pace from history: the directory that followed the service judged more of its past
    # on-the-books nights by recorded versions than a fresh load, which has one version each
    judged = {d: _history_judged(served.tmp / d / "warehouse.duckdb") for d in ("a", "fresh")}
    assert judged["a"] > judged["fresh"], judged


def _history_judged(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute(
            "select sum(otb_nights_from_history) from marts.booking_pace "
            "where as_of_date < (select max(as_of_date) from marts.booking_pace)"
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    return int(row[0])


@pytest.mark.chaos
def test_three_daily_runs_equal_a_full_load(served: Served) -> None:
    dir_a = _follow(served, [24, 24, 24])
    served.assert_equals_a_fresh_full_load(dir_a, "after_3x24h")


@pytest.mark.chaos
def test_one_run_after_three_days_equals_a_full_load(served: Served) -> None:
    dir_a = _follow(served, [72])
    served.assert_equals_a_fresh_full_load(dir_a, "after_72h")
