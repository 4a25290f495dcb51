"""The nightly sweep: finds what the feed missed, lands only what differs, and says what."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from assets.changes import SWEEP_STATE, ChangeSettings, apply_changes, sweep
from assets.lake import Lake
from tests.incremental.fakes import changed_reservation, fixture, opener

SETTINGS = ChangeSettings(today=date(2026, 6, 1), horizon_days=3)


def test_sweep_reports_and_lands_what_the_feed_missed(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), SETTINGS)
    mark = lake.read_state(SWEEP_STATE)
    assert mark is not None and mark["modified_since"] == "2026-01-03T00:00:00.000"

    # Changed at the source without any event reaching us.
    data["reservation_details"] = [
        changed_reservation(4, status=-12, modifiedDate="2026-01-06T00:00:00.000")
        if r["reservationId"] == 4
        else r
        for r in data["reservation_details"]
    ]
    data["units"][0] = {**data["units"][0], "cleaningStatus": "DIRTY"}
    files_before = {t: len(lake.files(t)) for t in ("locations", "companies")}

    report = sweep(lake, opener(data), SETTINGS)
    assert report.diffs["reservations"]["changed"] == 1
    assert report.diffs["reservations"]["sample"] == [[4]]
    assert report.diffs["units"]["changed"] == 1
    assert report.diffs["locations"] == {"new": 0, "changed": 0, "removed": 0, "sample": []}
    assert {"reservations", "units"} <= report.tables
    # Lists that did not differ were not rewritten.
    assert {t: len(lake.files(t)) for t in ("locations", "companies")} == files_before
    rows = {r["reservation_id"]: r for r in lake.current("reservations").to_pylist()}
    assert rows[4]["status"] == -12
    assert lake.read_state(SWEEP_STATE)["modified_since"] == "2026-01-06T00:00:00.000"

    again = sweep(lake, opener(data), SETTINGS)
    assert again.diffs["reservations"]["changed"] == 0
    assert again.diffs["units"]["changed"] == 0
    assert not again.tables
