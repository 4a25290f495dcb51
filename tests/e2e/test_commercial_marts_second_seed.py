"""The commercial marts (owners, channel net revenue, ancillary revenue, guest mix, offer
discounts) against the ground truth on a second seed: the rules hold for another world, not only
for seed 7's."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pandas as pd
import pytest

from pipelines.resources import DEFAULT_HORIZON_DAYS
from sandbox.runner import SandboxSettings
from sandbox.world.truth_marts import mart_truth
from tests.e2e.conftest import PipelineRun, _run
from tests.e2e.test_mart_truth import mismatches

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e_seed3")]

COMMERCIAL = (
    "owner_statement_monthly",
    "channel_net_revenue_monthly",
    "ancillary_revenue_monthly",
    "guest_mix_monthly",
    "offer_discount_monthly",
)


@pytest.fixture(scope="module")
def seed3_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PipelineRun]:
    yield from _run(tmp_path_factory, SandboxSettings(seed=3, scale="small"))


@pytest.fixture(scope="module")
def truth3(seed3_run: PipelineRun) -> dict[str, pd.DataFrame]:
    world = seed3_run.handle.world
    con = duckdb.connect(str(seed3_run.settings.warehouse_path), read_only=True)
    try:
        row = con.execute("select as_of from meta.build_settings").fetchone()
    finally:
        con.close()
    assert row is not None
    return mart_truth(
        world,
        as_of=row[0],
        availability_start=world.now.date(),
        availability_days=DEFAULT_HORIZON_DAYS,
    )


@pytest.mark.parametrize("name", COMMERCIAL)
def test_commercial_mart_matches_truth_on_seed_3(
    seed3_run: PipelineRun, truth3: dict[str, pd.DataFrame], name: str
) -> None:
    con = duckdb.connect(str(seed3_run.settings.warehouse_path), read_only=True)
    try:
        rel = con.execute(f"select * from marts.{name}")
        cols = [d[0] for d in rel.description or ()]
        mart = pd.DataFrame.from_records(rel.fetchall(), columns=cols)
    finally:
        con.close()
    truth = truth3[name]
    assert len(truth) > 10
    bad = mismatches(name, truth, mart)
    assert not bad, f"{name}: {len(bad)} differences:\n" + "\n".join(bad[:25])
