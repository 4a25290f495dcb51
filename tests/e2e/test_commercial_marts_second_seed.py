"""The commercial marts (owners, channel net revenue, ancillary revenue, guest mix, offer
discounts) against the ground truth on a second seed: the rules hold for another world, not only
for seed 7's. The seed-3 world and warehouse are built once (tests/e2e/conftest.py `seed3_run`)
and shared with tests/e2e/test_supply_second_seed.py."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.e2e.conftest import PipelineRun, read_mart
from tests.e2e.test_mart_truth import mismatches

# The second seed is `make chaos`'s (~13 CPU s): the default suite compares seed 7's marts with
# the truth (tests/e2e/test_mart_truth.py, test_supply_truth.py and the other e2e files).
pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.chaos,
    pytest.mark.xdist_group("e2e_seed3"),
]

COMMERCIAL = (
    "owner_statement_monthly",
    "channel_net_revenue_monthly",
    "ancillary_revenue_monthly",
    "guest_mix_monthly",
    "offer_discount_monthly",
)


@pytest.mark.parametrize("name", COMMERCIAL)
def test_commercial_mart_matches_truth_on_seed_3(
    seed3_run: PipelineRun, seed3_truth: dict[str, pd.DataFrame], name: str
) -> None:
    truth = seed3_truth[name]
    assert len(truth) > 10
    bad = mismatches(name, truth, read_mart(seed3_run, name))
    assert not bad, f"{name}: {len(bad)} differences:\n" + "\n".join(bad[:25])
