"""The nightly sweep: finds what the feed missed, lands only what differs, and says what."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from assets.guard import RemovalRefused
from assets.modes import apply_changes, sweep
from assets.run import ChangeRun
from assets.settings import IngestSettings
from lake.state import PENDING_STATE, SWEEP_STATE, next_batch_id, pending_tables
from lake.store import Lake
from tests.incremental.fakes import changed_reservation, fixture
from tests.incremental.id_fakes import id_opener as opener

SETTINGS = IngestSettings(today=date(2026, 6, 1), horizon_days=3)


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
    assert report.diffs["reservations"]["removed"] == 0
    ids = report.diffs["reservation_ids"]  # every id is still at the source: nothing removed
    assert ids["ran"] and (ids["lake_ids"], ids["service_ids"], ids["removed"]) == (5, 5, 0)
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
    assert not again.diffs["reservation_ids"]["ran"]  # once per business date
    assert not again.tables


def test_an_empty_reference_list_is_not_landed_as_a_wipe(tmp_path: Path) -> None:
    """A 204/empty answer for a whole reference list keeps the lake's rows (and says so)."""
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), SETTINGS)
    before = {t: lake.current(t).num_rows for t in ("locations", "accommodation_types", "rates")}
    assert all(before.values())
    files_before = len(lake.files("locations"))
    data["locations"] = []
    data["accommodation_types"] = []

    report = sweep(lake, opener(data), SETTINGS)

    assert report.diffs["locations"]["refused"] == "empty read"
    assert report.diffs["accommodation_types"]["refused"] == "empty read"
    assert any("locations: the service listed no usable record" in n for n in report.notes)
    after = {t: lake.current(t).num_rows for t in ("locations", "accommodation_types", "rates")}
    assert after == before
    assert len(lake.files("locations")) == files_before

    # A real removal of one record (the list is not empty) still lands.
    units = lake.current("units").num_rows
    data["locations"] = fixture()["locations"]
    data["accommodation_types"] = fixture()["accommodation_types"]
    data["units"] = fixture()["units"][1:]
    report = sweep(lake, opener(data), SETTINGS)
    assert report.diffs["units"]["removed"] == 1 and "refused" not in report.diffs["units"]
    assert lake.current("units").num_rows == units - 1
    assert lake.current("locations").num_rows == before["locations"]


def test_a_sweep_failing_late_still_marks_what_it_landed_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables committed before a failure are in the lake: their models must still be rebuilt,
    although the rerun finds nothing left to land for them."""
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), SETTINGS)
    lake.write_state(PENDING_STATE, next_batch_id(lake), {"tables": "", "batch_id": "built"})
    assert pending_tables(lake) == set()
    data["reservation_details"] = [
        changed_reservation(4, status=-12, modifiedDate="2026-01-06T00:00:00.000")
        if r["reservationId"] == 4
        else r
        for r in data["reservation_details"]
    ]

    async def boom(self: ChangeRun, since: object) -> None:
        raise RuntimeError("finance read failed")

    monkeypatch.setattr(ChangeRun, "refresh_finance", boom)
    with pytest.raises(RuntimeError, match="finance read failed"):
        sweep(lake, opener(data), SETTINGS)
    assert {r["reservation_id"]: r["status"] for r in lake.current("reservations").to_pylist()}[
        4
    ] == -12
    assert "reservations" in pending_tables(lake)


def test_an_empty_type_list_on_a_day_roll_keeps_every_rate(tmp_path: Path) -> None:
    """The day-roll reconciliation: an empty accommodation type list used to be read as every
    type removed, and every type's rates were tombstoned with them."""
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, opener(data), SETTINGS)
    tables = ("accommodation_types", "rates", "availability")
    before = {t: lake.current(t).num_rows for t in tables}
    assert all(before.values())
    data["accommodation_types"] = []
    next_day = IngestSettings(today=date(2026, 6, 2), horizon_days=3)

    # The type list is refused softly (kept, with a note); the availability read of the same
    # day, empty for types that still exist, is refused by the removal guard: the run fails
    # naming the table, and nothing is removed.
    with pytest.raises(RemovalRefused, match="'availability'"):
        apply_changes(lake, opener(data), next_day)

    assert {t: lake.current(t).num_rows for t in tables} == before


def test_the_sweep_asks_again_about_recent_tombstones(tmp_path: Path) -> None:
    """A reservation tombstoned on a bad answer (missing from a by-id refetch, twice) is asked
    for again by the next sweep and is live again when the service returns it."""
    from assets.modes import refresh_reservations

    lake = Lake(tmp_path / "lake")
    data = fixture()
    data["reservation_details"] = [  # modified long before the sweep's window
        {**r, "modifiedDate": "2025-11-01T00:00:00.000"} if r["reservationId"] == 1 else r
        for r in data["reservation_details"]
    ]
    apply_changes(lake, opener(data), SETTINGS)
    full = list(data["reservation_details"])
    data["reservation_details"] = [r for r in full if r["reservationId"] != 1]
    refresh_reservations(lake, opener(data), SETTINGS, [1, 2])  # 1 does not come back
    assert 1 not in lake.current_ids("reservations", "reservation_id")
    children = lake.current("bill_lines").num_rows

    data["reservation_details"] = full  # the service had it all along
    report = sweep(lake, opener(data), SETTINGS)

    assert report.diffs["recent_tombstones"] == {"asked": 1, "back": 1}
    assert 1 in lake.current_ids("reservations", "reservation_id")
    assert lake.current("bill_lines").num_rows > children  # with its children
    assert any("live again" in note for note in report.notes)

    again = sweep(lake, opener(data), SETTINGS)  # nothing tombstoned recently any more
    assert again.diffs["recent_tombstones"] == {"asked": 0, "back": 0}
