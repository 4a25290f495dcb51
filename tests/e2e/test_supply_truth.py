"""Sellable supply over simulated time: a bootstrap; hours of the same day in which channels
change allotments and parks a rentability rule, a type's rank and a location's minimum booking
age (ALLOTMENT_EVENT and RENTABILITY_EVENT re-read their lists, ACCOMMODATION_TYPE_EVENT and
RESORT_EVENT refetch the records over HTTP, all without a new business date); a week of the sandbox's operations (incidents
reported, repairs finished early, planned works withdrawn), allotment, rentability and
reservability changes, and an incremental run. `marts.occupancy_daily` and
`marts.orphan_nights` then match the sandbox's ground truth to the night, withdrawn tasks and
allotments are gone from the lake, and the incremental lake equals a fresh full load."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from rich.console import Console

from lake.store import Lake
from pipelines.runner import ServiceTarget, run_pipeline
from pipelines.settings import Settings
from pipelines.summary import RunSummary
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from sandbox.world.truth_marts import reporting_range
from sandbox.world.truth_supply import orphan_rows

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("supply")]

KEY = ["date", "location_id", "accommodation_type_id"]
SUPPLY = [
    "nights_available",
    "owner_hold_nights",
    "out_of_order_nights",
    "allotment_held_nights",
    "sellable_nights",
]


@pytest.fixture
def home() -> Iterator[None]:
    saved = os.environ.get("DAGSTER_HOME")
    yield
    if saved is None:
        os.environ.pop("DAGSTER_HOME", None)
    else:
        os.environ["DAGSTER_HOME"] = saved


def _run(settings: Settings, handle: SandboxHandle, mode: str = "auto") -> RunSummary:
    """One run; every data check of it must pass (this is also where the default suite checks
    them on seed 11, tests/e2e/test_run_checks.py)."""
    target = ServiceTarget(handle.base_url, handle.client_id, handle.client_secret, handle.scope)
    summary = run_pipeline(
        settings, mode=mode, quiet=True, console=Console(file=io.StringIO()), target=target
    )
    failing = [(c.asset, c.name, c.outcome) for c in summary.checks if c.outcome != "passed"]
    assert failing == [], (summary.mode, failing)
    return summary


def _mart(settings: Settings) -> pd.DataFrame:
    con = duckdb.connect(str(settings.warehouse_path), read_only=True)
    try:
        mart = con.execute(
            "select date_day as date, location_id, accommodation_type_id, nights_available, "
            "nights_sold, owner_hold_nights, out_of_order_nights, allotment_held_nights, "
            "sellable_nights, "
            "sellable_occupancy from marts.occupancy_daily"
        ).df()
    finally:
        con.close()
    mart["date"] = pd.to_datetime(mart["date"]).dt.date
    return mart


def _task_ids(settings: Settings) -> set[int]:
    return set(Lake(settings.lake_dir).current_ids("operation_tasks", "task_id"))


def _allotments(settings: Settings) -> dict[int, tuple]:
    rows = Lake(settings.lake_dir).current("allotments").to_pylist()
    return {r["allotment_id"]: (r["quantity"], r["start_date"].isoformat()) for r in rows}


def _served_allotments(handle: SandboxHandle) -> dict[int, tuple]:
    return {
        a["allotmentId"]: (a["quantity"], a["startDate"])
        for a in handle.world.records("allotments")
    }


def _lists_match_the_service(settings: Settings, handle: SandboxHandle) -> None:
    """The rentability config and reservability in the lake are what the service serves."""
    lake = Lake(settings.lake_dir)
    config = {
        r["rentability_config_id"]: r["rentability_set_id"]
        for r in lake.current("rentability_config").to_pylist()
    }
    served = {
        c["rentabilityConfigId"]: c["rentabilitySetId"]
        for c in handle.world.records("rentabilityconfig")
    }
    assert config == served
    online = {
        r["resource_id"]: r["reservable_on_internet"]
        for r in lake.current("resource_reservability").to_pylist()
    }
    assert online == {
        r["resourceId"]: r["reservableOnInternet"] for r in handle.world.records("reservability")
    }


def _reference_matches_the_service(settings: Settings, handle: SandboxHandle) -> None:
    """Types and locations changed by the sandbox (ACCOMMODATION_TYPE_EVENT, RESORT_EVENT)
    reached the lake over HTTP on the same business day: their refresh paths work."""
    lake = Lake(settings.lake_dir)
    priority = {
        r["resource_id"]: r["priority"] for r in lake.current("accommodation_types").to_pylist()
    }
    assert priority == {
        t["resourceId"]: t["priority"] for t in handle.world.records("accommodationtypes")
    }
    age = {
        r["location_id"]: r["min_age_for_booking"] for r in lake.current("locations").to_pylist()
    }
    assert age == {
        loc["locationId"]: loc["minAgeForBooking"] for loc in handle.world.records("locations")
    }


def _assert_orphans_match_truth(settings: Settings, handle: SandboxHandle) -> None:
    first, last = reporting_range(handle.world)
    truth = orphan_rows(handle.world, handle.world.now.date(), first.toordinal(), last.toordinal())
    con = duckdb.connect(str(settings.warehouse_path), read_only=True)
    try:
        rows = con.execute(
            "select date_day, accommodation_type_id, unsold_nights, orphan_nights "
            "from marts.orphan_nights"
        ).fetchall()
    finally:
        con.close()
    mart = {(d, t): (u, o) for d, t, u, o in rows}
    expected = {
        (r.date_day, r.accommodation_type_id): (r.unsold_nights, r.orphan_nights)
        for r in truth.itertuples(index=False)
    }
    assert mart == expected
    assert sum(o for _, o in expected.values()) > 20


def _assert_matches_truth(handle: SandboxHandle, mart: pd.DataFrame) -> None:
    truth = handle.world.ground_truth()["nights"].rename(
        columns={"resource_id": "accommodation_type_id"}
    )
    truth["date"] = pd.to_datetime(truth["date"]).dt.date
    lo, hi = truth["date"].min(), truth["date"].max()
    mart = mart[(mart["date"] >= lo) & (mart["date"] <= hi)]
    merged = truth.merge(mart, on=KEY, how="outer", suffixes=("_truth", "_mart"))
    bad = pd.Series(False, index=merged.index)
    for v in SUPPLY:
        bad |= merged[f"{v}_truth"].fillna(0) != merged[f"{v}_mart"].fillna(0)
    assert not bad.any(), merged[bad].head(20).to_string()
    assert int(truth["out_of_order_nights"].sum()) > 50
    assert int(truth["allotment_held_nights"].sum()) > 50
    # sellable occupancy is recomputed from the counts
    sellable = mart[mart["sellable_nights"] > 0]
    expected = sellable["nights_sold"] / sellable["sellable_nights"]
    assert (sellable["sellable_occupancy"] - expected).abs().max() < 1e-12


def test_out_of_order_supply_follows_the_sandbox_over_time(tmp_path: Path, home: None) -> None:
    incremental = Settings(data_dir=tmp_path / "incremental")
    fresh = Settings(data_dir=tmp_path / "fresh")
    with run_sandbox(SandboxSettings(seed=11, scale="small")) as handle:
        assert _run(incremental, handle).mode == "bootstrap"
        served = {t["taskId"] for t in handle.world.records("operationtasks")}
        assert _task_ids(incremental) == served
        _assert_matches_truth(handle, _mart(incremental))
        assert _allotments(incremental) == _served_allotments(handle)

        # the same business day: only the ALLOTMENT_EVENTs can make the run re-read allotments
        day = handle.world.now.date()
        first = handle.world.advance(20)
        assert handle.world.now.date() == day
        allotment_events = [
            e
            for e in handle.world.records("events")
            if e["eventId"] >= first["firstEventId"] and e["eventType"] == "ALLOTMENT_EVENT"
        ]
        assert allotment_events
        reference_events = {
            e["eventType"]
            for e in handle.world.records("events")
            if e["eventId"] >= first["firstEventId"]
        }
        assert {"ACCOMMODATION_TYPE_EVENT", "RESORT_EVENT"} <= reference_events
        assert _allotments(incremental) != _served_allotments(handle)
        assert _run(incremental, handle).mode == "incremental"
        assert _allotments(incremental) == _served_allotments(handle)
        _assert_matches_truth(handle, _mart(incremental))
        _lists_match_the_service(incremental, handle)
        _reference_matches_the_service(incremental, handle)

        summary = handle.world.advance(24 * 7)
        assert summary["n_operations"] > 0
        second = _run(incremental, handle)
        assert second.mode == "incremental"
        now_served = {t["taskId"] for t in handle.world.records("operationtasks")}
        withdrawn = served - now_served
        assert withdrawn and now_served - served  # works withdrawn, incidents reported
        assert _task_ids(incremental) == now_served  # withdrawn tasks are gone from the lake
        assert _allotments(incremental) == _served_allotments(handle)
        _assert_matches_truth(handle, _mart(incremental))
        _lists_match_the_service(incremental, handle)
        _assert_orphans_match_truth(incremental, handle)

        # the incremental lake and mart equal a fresh full load of the same service state
        _run(fresh, handle, mode="full")
    lakes = [Lake(s.lake_dir).current("operation_tasks") for s in (incremental, fresh)]
    rows = [
        sorted(
            (r["task_id"], r["status"], r["out_of_order_from"], r["out_of_order_to"])
            for r in t.to_pylist()
        )
        for t in lakes
    ]
    assert rows[0] == rows[1]
    assert _allotments(incremental) == _allotments(fresh)
    marts = [_mart(s).sort_values(KEY).reset_index(drop=True) for s in (incremental, fresh)]
    pd.testing.assert_frame_equal(marts[0][[*KEY, *SUPPLY]], marts[1][[*KEY, *SUPPLY]])
