"""Supply against the ground truth on a second seed, to the night: out-of-order, owner-blocked
and allotment-held nights and sellable occupancy (`marts.occupancy_daily`), allotment pickup
and orphan nights; and every data check of the seed-3 run. Seed 7's comparison is in
test_mart_truth.py and test_supply_truth.py; this one reads the seed-3 world and warehouse built
once for the session (`seed3_run`)."""

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

KEY = ["date", "location_id", "accommodation_type_id"]
SUPPLY = [
    "nights_available",
    "nights_sold",
    "owner_hold_nights",
    "out_of_order_nights",
    "allotment_held_nights",
    "sellable_nights",
]


@pytest.mark.parametrize("name", ["allotment_pickup", "orphan_nights"])
def test_supply_mart_matches_truth_on_seed_3(
    seed3_run: PipelineRun, seed3_truth: dict[str, pd.DataFrame], name: str
) -> None:
    truth = seed3_truth[name]
    bad = mismatches(name, truth, read_mart(seed3_run, name))
    assert not bad, f"{name}: {len(bad)} differences:\n" + "\n".join(bad[:25])
    # the comparison covered what the rules do, not only empty rows
    if name == "allotment_pickup":
        assert (truth["picked_up_nights"] > 0).sum() > 20
        assert (truth["released_nights"] > 0).sum() > 20
        assert (truth["still_held_nights"] > 0).sum() > 20
    else:
        assert truth["orphan_nights"].sum() > 20
        assert (truth["unsold_nights"] - truth["orphan_nights"]).sum() > 500


def test_sellable_supply_matches_truth_on_seed_3(
    seed3_run: PipelineRun, seed3_truth: dict[str, pd.DataFrame]
) -> None:
    truth = seed3_truth["nights"].rename(columns={"resource_id": "accommodation_type_id"})
    truth["date"] = pd.to_datetime(truth["date"]).dt.date
    mart = read_mart(seed3_run, "occupancy_daily").rename(columns={"date_day": "date"})
    lo, hi = truth["date"].min(), truth["date"].max()
    mart = mart[(mart["date"] >= lo) & (mart["date"] <= hi)]
    merged = truth.merge(mart, on=KEY, how="outer", suffixes=("_truth", "_mart"))
    bad = pd.Series(False, index=merged.index)
    for v in SUPPLY:
        bad |= merged[f"{v}_truth"].fillna(0) != merged[f"{v}_mart"].fillna(0)
    assert not bad.any(), merged[bad].head(20).to_string()
    assert int(truth["out_of_order_nights"].sum()) > 50
    assert int(truth["owner_hold_nights"].sum()) > 50
    assert int(truth["allotment_held_nights"].sum()) > 50
    # sellable occupancy: the truth's nights sold / nights sellable, the same DOUBLE division
    sellable = merged[merged["sellable_nights_truth"] != 0]
    expected = sellable["nights_sold_truth"].astype(float) / sellable["sellable_nights_truth"]
    assert (sellable["sellable_occupancy"] == expected).all()
    assert merged.loc[merged["sellable_nights_truth"] == 0, "sellable_occupancy"].isna().all()


def test_every_check_passes_on_seed_3(seed3_run: PipelineRun) -> None:
    """The data checks hold on a world other than the default one (the seed-3 build's run)."""
    checks = seed3_run.summary.checks
    assert len(checks) > 50
    failing = [(c.asset, c.name, c.outcome) for c in checks if c.outcome != "passed"]
    assert failing == []
