"""The event cursor: set by the bootstrap from the mark read first, moved only after landing."""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

from assets.modes import apply_changes, refresh_reservations
from assets.settings import IngestSettings
from lake.locks import LakeBusy, writer_lock
from lake.state import CURSOR_STATE, Cursor, fresh_batch_id, read_cursor, write_cursor
from lake.store import Lake
from tests.incremental.fakes import (
    Boom,
    IncrementalFakeService,
    changed_reservation,
    event,
    fixture,
    opener,
)

TODAY = date(2026, 6, 1)
SETTINGS = IngestSettings(today=TODAY, horizon_days=3)


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path / "lake")


@pytest.fixture
def data() -> dict[str, Any]:
    return fixture()


def _bootstrapped(lake: Lake, data: dict[str, Any]) -> Cursor:
    report = apply_changes(lake, opener(data), SETTINGS)
    assert report.mode == "bootstrap"
    cursor = read_cursor(lake)
    assert cursor is not None
    return cursor


def _change_the_world(data: dict[str, Any]) -> None:
    """Reservation 1 confirmed again (new status), 3 deleted, customer 502 merged into 501."""
    data["reservation_details"] = [
        changed_reservation(1, status=12, modifiedDate="2026-01-05T00:00:00.000")
        if r["reservationId"] == 1
        else r
        for r in data["reservation_details"]
        if r["reservationId"] != 3
    ]
    data["customers"] = [c for c in data["customers"] if c["customerId"] != 502]
    data["events"] += [
        event(3, "RESERVATION_EVENT", 1),
        event(4, "RESERVATION_EVENT", 3, "DELETE"),
        event(5, "CUSTOMER_EVENT", 501, "MERGE", old=502),
        event(6, "RESERVATION_EVENT", 1),  # duplicate: one refetch
        {**event(7, "IMPLY_EVENT", 11), "entityType": "UNIT"},  # unit implies: counted only
    ]


def _status(lake: Lake, rid: int) -> int | None:
    rows = lake.current("reservations").to_pylist()
    return next((r["status"] for r in rows if r["reservation_id"] == rid), None)


def test_bootstrap_reads_the_mark_before_the_snapshot(lake: Lake, data: dict[str, Any]) -> None:
    """An event added while the snapshot runs lies after the cursor, so it is replayed."""

    class DuringSnapshot(IncrementalFakeService):
        async def latest_event_id(self) -> int | None:
            mark = await super().latest_event_id()
            data["events"].append(event(3, "RESERVATION_EVENT", 2))
            return mark

    apply_changes(lake, lambda: DuringSnapshot(data), SETTINGS)
    cursor = read_cursor(lake)
    assert cursor is not None and cursor.event_id == 2
    assert cursor.business_date == TODAY
    report = apply_changes(lake, opener(data), SETTINGS)
    assert report.plan["refresh"] == {"reservations": 1}
    assert read_cursor(lake).event_id == 3  # type: ignore[union-attr]


def test_cursor_moves_only_after_every_table_landed(lake: Lake, data: dict[str, Any]) -> None:
    before = _bootstrapped(lake, data)
    _change_the_world(data)
    seen: list[tuple[str, int]] = []

    def watch(name: str) -> None:
        seen.append((name, read_cursor(lake).event_id))  # type: ignore[union-attr]

    report = apply_changes(lake, opener(data), SETTINGS, on_landed=watch)
    assert {name for name, _ in seen} >= {"customers", "customer_merges", "reservations"}
    assert all(cursor == before.event_id for _, cursor in seen)
    after = read_cursor(lake)
    assert after is not None and after.event_id == 7 == report.cursor_after
    assert after.event_date == "2026-01-05T00:00:07.000"
    assert report.plan["not_modelled"] == {"IMPLY_EVENT/UNIT": 1}
    # The changes landed: refetched, tombstoned, merged.
    assert _status(lake, 1) == 12
    assert _status(lake, 3) is None
    customers = {r["customer_id"] for r in lake.current("customers").to_pylist()}
    assert 502 not in customers and 501 in customers
    merges = lake.current("customer_merges").to_pylist()
    assert {(m["old_customer_id"], m["customer_id"]) for m in merges} >= {(502, 501)}
    # A deleted parent takes its children with it.
    assert 3 not in set(lake.current("bill_lines").column("reservation_id").to_pylist())


def test_tombstones_are_rows_with_the_key(lake: Lake, data: dict[str, Any]) -> None:
    _bootstrapped(lake, data)
    _change_the_world(data)
    report = apply_changes(lake, opener(data), SETTINGS)
    files = [f for f in lake.files("reservations") if f.name.startswith(report.batch_id)]
    import pyarrow.parquet as pq

    landed = pq.read_table(files)
    dead = landed.filter(pc.field("_is_deleted"))
    assert dead.column("reservation_id").to_pylist() == [3]
    assert dead.column("_batch_kind").to_pylist() == ["delta"]
    assert dead.column("status").null_count == 1


def test_crash_between_fetch_and_land_keeps_the_cursor(lake: Lake, data: dict[str, Any]) -> None:
    before = _bootstrapped(lake, data)
    _change_the_world(data)

    def kill(name: str) -> None:
        if name == "customer_merges":  # customers landed, reservations not yet
            raise Boom("killed")

    with pytest.raises(Boom):
        apply_changes(lake, opener(data), SETTINGS, on_landed=kill)
    assert read_cursor(lake) == before
    assert _status(lake, 3) is not None  # not yet applied
    # Restart: the same events are replayed and the run completes.
    report = apply_changes(lake, opener(data), SETTINGS)
    assert report.cursor_before == before.event_id
    assert read_cursor(lake).event_id == 7  # type: ignore[union-attr]
    assert _status(lake, 1) == 12 and _status(lake, 3) is None


def test_failure_mid_stream_lands_nothing_of_that_table(lake: Lake, data: dict[str, Any]) -> None:
    before = _bootstrapped(lake, data)
    _change_the_world(data)
    data["events"].append(event(8, "RESERVATION_EVENT", 2))
    data["events"].append(event(9, "RESERVATION_EVENT", 4))  # 3 ids -> 2 pages
    files_before = lake.files("reservations")
    data["fail_on"] = {"reservation_details"}
    with pytest.raises(Boom):
        apply_changes(lake, opener(data), SETTINGS)
    assert read_cursor(lake) == before
    assert lake.files("reservations") == files_before
    assert not list(lake.table_dir("reservations").glob("*.tmp"))
    data["fail_on"] = set()
    apply_changes(lake, opener(data), SETTINGS)
    assert read_cursor(lake).event_id == 9  # type: ignore[union-attr]


def test_no_new_events_keeps_the_cursor(lake: Lake, data: dict[str, Any]) -> None:
    before = _bootstrapped(lake, data)
    report = apply_changes(lake, opener(data), SETTINGS)
    assert report.plan["events"] == 0
    assert not {"reservations", "customers"} & report.tables
    assert read_cursor(lake).event_id == before.event_id  # type: ignore[union-attr]


def test_cursor_state_is_append_only_newest_wins(lake: Lake) -> None:
    write_cursor(lake, "20260101T000000Z-00000001", Cursor(5, None, TODAY))
    write_cursor(lake, "20260101T000001Z-00000002", Cursor(9, "2026-01-01T00:00:00.000", TODAY))
    files = sorted((lake.root / "_state" / CURSOR_STATE).glob("*.parquet"))
    assert len(files) == 2
    assert read_cursor(lake) == Cursor(9, "2026-01-01T00:00:00.000", TODAY)


def test_batch_ids_never_sort_before_recorded_state(lake: Lake) -> None:
    write_cursor(lake, "20260101T000005Z-ffffffff", Cursor(1))
    assert fresh_batch_id(lake, "20260101T000001Z-00000000") > "20260101T000005Z-ffffffff"
    assert fresh_batch_id(lake, "20990101T000000Z-00000000") == "20990101T000000Z-00000000"


def test_writer_lock_excludes_a_second_writer(lake: Lake) -> None:
    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with writer_lock(lake):
            entered.set()
            release.wait(5)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert entered.wait(5)
        with pytest.raises(LakeBusy), writer_lock(lake, timeout=0.3):
            pass
    finally:
        release.set()
        thread.join()
    with writer_lock(lake, timeout=0.3):
        pass


def test_webhook_refresh_lands_without_moving_the_cursor(lake: Lake, data: dict[str, Any]) -> None:
    before = _bootstrapped(lake, data)
    data["reservation_details"] = [
        changed_reservation(2, status=-12) if r["reservationId"] == 2 else r
        for r in data["reservation_details"]
    ]
    report = refresh_reservations(lake, opener(data), SETTINGS, [2, 2])
    assert report.tables >= {"reservations", "bill_lines"}
    assert _status(lake, 2) == -12
    assert read_cursor(lake) == before


@pytest.mark.parametrize("applied", [None, (), (7,), tuple(range(1, 5001))])
def test_cursor_round_trips_the_applied_ids(lake: Lake, applied: tuple[int, ...] | None) -> None:
    """The applied set is a list<int64> column of the state row; null means unknown."""
    cursor = Cursor(5000, "2026-01-01T00:00:00.000", TODAY, "b", applied)
    write_cursor(lake, "20260101T000000Z-00000001", cursor)
    assert read_cursor(lake) == cursor


def test_a_cursor_row_without_the_window_fields_still_works(
    lake: Lake, data: dict[str, Any]
) -> None:
    """Rows written before the overlap window (no `applied_event_ids`) read as an unknown set,
    and the next run continues from them and writes the new fields."""
    _bootstrapped(lake, data)
    old_row = {
        "event_id": 2,
        "event_date": "2026-01-04T00:00:00.000",
        "business_date": TODAY.isoformat(),
        "batch_id": "20990101T000000Z-00000000",
        "written_at": "2099-01-01T00:00:00+00:00",
    }
    lake.write_state(CURSOR_STATE, "20990101T000000Z-00000000", old_row)
    assert read_cursor(lake) == Cursor(2, "2026-01-04T00:00:00.000", TODAY, old_row["batch_id"])
    _change_the_world(data)
    report = apply_changes(lake, opener(data), SETTINGS)
    assert report.cursor_before == 2 and report.cursor_after == 7
    assert _status(lake, 1) == 12 and _status(lake, 3) is None
    after = read_cursor(lake)
    assert after is not None and after.event_date == "2026-01-05T00:00:07.000"
    # this fake cannot filter events by date: no window was read, so the set stays unknown
    assert after.applied_ids is None
    assert any("no window" in note for note in report.notes)
