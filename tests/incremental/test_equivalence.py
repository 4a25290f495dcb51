"""Full load + incremental run == a fresh full load of the same service state (lake and marts).

One small sandbox for the module: data dir A is loaded once and then follows the world through
incremental runs; after each step a fresh full load into a new dir B is the reference. The
comparison covers every lake table's current state (lineage columns excluded) and every mart.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from assets.modes import apply_changes
from assets.run_report import RunReport
from assets.settings import IngestSettings
from lake.state import read_cursor
from lake.store import Lake
from tests.incremental.helpers import lake_differences, mart_differences, sandbox_opener
from warehouse.refresh import refresh_warehouse

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

FAULTS = {"http_503": 0.05, "storm_429": 0.05, "truncate": 0.02}


class Killed(RuntimeError):
    """Stands in for the process being killed between two landed tables."""


@dataclass
class Setup:
    sandbox: Any
    opener: Any
    dir_a: Path
    tmp: Path

    @property
    def lake_a(self) -> Lake:
        return Lake(self.dir_a / "lake")

    def today(self) -> date:
        with self.sandbox.world.lock:
            return self.sandbox.world.now.date()

    def settings(self) -> IngestSettings:
        return IngestSettings(today=self.today(), horizon_days=60)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    from sandbox.runner import SandboxSettings, run_sandbox

    with run_sandbox(SandboxSettings(seed=11, scale="small")) as sb:
        s = Setup(
            sb,
            sandbox_opener(sb, max_retries=12),
            tmp_path_factory.mktemp("lake_a"),
            tmp_path_factory.mktemp("refs"),
        )
        report = apply_changes(s.lake_a, s.opener, s.settings())
        assert report.mode == "bootstrap"
        yield s


def _all_kinds_of_change(world: Any) -> None:
    """Besides what 72 simulated hours bring: a customer merge and deletions."""
    with world.lock:
        with_res = sorted(k for k, v in world.cust_res.items() if v)
    world.merge_customers(with_res[0], with_res[1])
    world.churn("customers")  # a new customer and a CUSTOMER_EVENT DELETE
    world.churn("reservations")  # a new cart and a RESERVATION_EVENT DELETE
    world.advance(hours=72)


def _assert_equivalent(s: Setup, name: str) -> None:
    """A fresh full load of the current state into B; A's lake and marts must equal it."""
    dir_b = s.tmp / name
    dir_b.mkdir()
    today = s.today()
    apply_changes(Lake(dir_b / "lake"), s.opener, s.settings())
    refresh_warehouse(s.dir_a, as_of=today)
    refresh_warehouse(dir_b, as_of=today)
    assert lake_differences(s.lake_a, Lake(dir_b / "lake")) == {}
    assert mart_differences(s.dir_a / "warehouse.duckdb", dir_b / "warehouse.duckdb") == {}


def _covers(report: RunReport, *what: str) -> None:
    plan = report.plan
    for item in what:
        kind, _, target = item.partition(":")
        assert plan.get(kind, {}).get(target) if target else plan.get(kind), (item, plan)


def test_incremental_equals_full_after_72_hours(setup: Setup) -> None:
    s = setup
    refresh_warehouse(s.dir_a, as_of=s.today())  # the marts as they were, to be patched
    _all_kinds_of_change(s.sandbox.world)
    report = apply_changes(s.lake_a, s.opener, s.settings())
    assert report.mode == "incremental"
    _covers(
        report,
        "refresh:reservations",
        "refresh:customers",
        "delete:reservations",
        "delete:customers",
        "merges",
        "refresh:availability",
    )
    assert report.cursor_after == s.sandbox.world.event_high_water()
    # the horizon moved three days: it lands as a delta of what differs, not a full batch
    assert report.landed["availability"].batch_kind == "delta"
    avail = report.diffs["availability"]
    assert avail["removed"] > 0 and avail["unchanged"] > 0, avail
    _assert_equivalent(s, "after_72h")


# ~18 s of CI: `make chaos`. The default suite keeps faults (tests/reliability/test_fault_matrix.py,
# all together) and a killed driver (tests/reliability/test_kill_restart.py, one kill).
@pytest.mark.chaos
def test_equivalence_with_faults_and_a_killed_run(setup: Setup) -> None:
    s = setup
    _all_kinds_of_change(s.sandbox.world)
    before = read_cursor(s.lake_a)
    landed: list[str] = []

    def kill_after_two(name: str) -> None:
        landed.append(name)
        if len(landed) == 2:
            raise Killed(f"killed after landing {landed}")

    s.sandbox.faults.configure(FAULTS)
    try:
        with pytest.raises(Killed):
            apply_changes(s.lake_a, s.opener, s.settings(), on_landed=kill_after_two)
        assert read_cursor(s.lake_a) == before  # landed tables do not move the cursor
        report = apply_changes(s.lake_a, s.opener, s.settings())  # the restart
        injected = s.sandbox.stats()["faults"]
    finally:
        s.sandbox.faults.configure({})
    assert report.cursor_before == before.event_id  # type: ignore[union-attr]
    assert report.cursor_after == s.sandbox.world.event_high_water()
    assert sum(injected.get("injected", {}).values()) > 0, injected  # faults really fired
    _assert_equivalent(s, "after_faults_and_kill")
