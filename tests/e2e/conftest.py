"""The pipeline runs against the embedded sandbox shared by the end-to-end tests: the default
world's (`full_run`, tests/pipeline_runs.py, shared with the serve tests), the strict profile's
and the second seed's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import duckdb
import pandas as pd
import pytest

from sandbox.runner import SandboxSettings
from sandbox.world.truth_ancillary import ancillary_revenue
from sandbox.world.truth_channels import channel_net_revenue
from sandbox.world.truth_frames import lines_of, nights_of, reporting_range, reservations_of
from sandbox.world.truth_guests import guest_mix
from sandbox.world.truth_offers import offer_discounts
from sandbox.world.truth_owners import owner_statement
from sandbox.world.truth_supply import allotment_rows, orphan_rows
from tests import truth
from tests.pipeline_runs import PipelineRun, main_job_run


@pytest.fixture(scope="session")
def strict_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PipelineRun]:
    """The main job against the strict profile (tests/e2e/test_strict_profile.py, its own
    xdist group so that it runs beside the default run)."""
    yield from main_job_run(
        tmp_path_factory, SandboxSettings(seed=7, scale="small", profile="strict")
    )


# The second seed: one world and warehouse per session (per xdist group `e2e_seed3`), shared by
# tests/e2e/test_commercial_marts_second_seed.py and tests/e2e/test_supply_second_seed.py.
SECOND_SEED = SandboxSettings(seed=3, scale="small")
SECOND_SEED_MARTS = (
    "allotment_pickup",
    "orphan_nights",
    "owner_statement_monthly",
    "channel_net_revenue_monthly",
    "ancillary_revenue_monthly",
    "guest_mix_monthly",
    "offer_discount_monthly",
)


@pytest.fixture(scope="session")
def seed3_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PipelineRun]:
    yield from main_job_run(tmp_path_factory, SECOND_SEED)


def read_mart(run: PipelineRun, name: str) -> pd.DataFrame:
    """A mart as Python values (DECIMAL as Decimal, DATE as date, DOUBLE as float)."""
    return truth.read_mart(run.settings.warehouse_path, name)


def build_as_of(run: PipelineRun) -> date:
    con = duckdb.connect(str(run.settings.warehouse_path), read_only=True)
    try:
        row = con.execute("select as_of from meta.build_settings").fetchone()
    finally:
        con.close()
    assert row is not None and isinstance(row[0], date)
    return row[0]


@pytest.fixture(scope="session")
def seed3_truth(seed3_run: PipelineRun) -> dict[str, pd.DataFrame]:
    """The second seed's ground truth of the marts it is compared on (only those: the others'
    truth, booking pace and rate availability above all, is most of `mart_truth`'s time), and
    the world's nights (supply) under "nights"."""
    world = seed3_run.handle.world
    as_of = build_as_of(seed3_run)
    with world.lock:
        first, last = reporting_range(world)
        lo, hi = first.toordinal(), last.toordinal()
        res = reservations_of(world)
        lines = lines_of(world, res)
        nights = nights_of(res, lines)
        found = {
            "allotment_pickup": allotment_rows(world, as_of, lo, hi),
            "orphan_nights": orphan_rows(world, as_of, lo, hi),
            "owner_statement_monthly": owner_statement(world),
            "channel_net_revenue_monthly": channel_net_revenue(world, nights, lo, hi),
            "ancillary_revenue_monthly": ancillary_revenue(world, nights, lines, lo, hi),
            "guest_mix_monthly": guest_mix(world, res),
            "offer_discount_monthly": offer_discounts(world, nights, lines, lo, hi),
        }
    found["nights"] = world.ground_truth()["nights"]
    assert set(found) == {*SECOND_SEED_MARTS, "nights"}
    return found
