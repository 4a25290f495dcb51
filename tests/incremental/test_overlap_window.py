"""The overlap window: events that become visible after the cursor passed their id still land,
once, and the cursor keeps moving only after every table committed.

`WindowFake` is the incremental fake with the feed's window filters (`since`, `up_to_event_id`)
and `latest_event`; an event "committed late" is one appended to the feed after events with
higher ids were read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from assets.modes import apply_changes
from assets.plan import next_cursor, not_yet_applied
from assets.settings import IngestSettings
from lake.state import CURSOR_STATE, Cursor, read_cursor
from lake.store import Lake
from service.errors import BadRequest
from service.filters import format_value
from tests.incremental.fakes import (
    Boom,
    IncrementalFakeService,
    changed_reservation,
    event,
    fixture,
)

TODAY = date(2026, 6, 1)
SETTINGS = IngestSettings(today=TODAY, horizon_days=3)
NO_WINDOW = IngestSettings(today=TODAY, horizon_days=3, event_overlap=timedelta(0))

Record = dict[str, Any]


class WindowFake(IncrementalFakeService):
    """The fake feed with the window filters of `ReservationService.events`."""

    def events(  # type: ignore[override]
        self,
        after_event_id: int | None = None,
        page_size: int | None = None,
        *,
        since: datetime | None = None,
        up_to_event_id: int | None = None,
    ) -> AsyncIterator[list[Record]]:
        after = after_event_id or 0
        floor = format_value(since) if since is not None else None
        chosen = [
            e
            for e in self.data["events"]
            if e["eventId"] > after
            and (up_to_event_id is None or e["eventId"] <= up_to_event_id)
            and (floor is None or e["eventDate"] >= floor)
        ]
        self.data.setdefault("event_reads", []).append((after_event_id, since, up_to_event_id))
        return self._pages("events", sorted(chosen, key=lambda e: e["eventId"]))

    async def latest_event(self, up_to_event_id: int | None = None) -> Record | None:
        self.stats["events"] += 1
        chosen = [
            e
            for e in self.data["events"]
            if up_to_event_id is None or e["eventId"] <= up_to_event_id
        ]
        return max(chosen, key=lambda e: e["eventId"]) if chosen else None


def window_opener(data: dict[str, Any]) -> Any:
    return lambda: WindowFake(data)


@pytest.fixture
def data() -> dict[str, Any]:
    return fixture()


def _lake(tmp_path: Path, name: str) -> Lake:
    return Lake(tmp_path / name / "lake")


def _status(lake: Lake, rid: int) -> int | None:
    rows = lake.current("reservations").to_pylist()
    return next((r["status"] for r in rows if r["reservation_id"] == rid), None)


def _merge_rows(lake: Lake, event_id: int) -> int:
    """customer_merges rows ever landed (every batch, not only the current state) for an event."""
    files = lake.files("customer_merges")
    if not files:
        return 0
    ids = pq.read_table(files, columns=["event_id"]).column("event_id").to_pylist()
    return ids.count(event_id)


def _reservation_changed(data: dict[str, Any], rid: int, status: int) -> None:
    data["reservation_details"] = [
        changed_reservation(rid, status=status) if r["reservationId"] == rid else r
        for r in data["reservation_details"]
    ]


def _late_and_a_later_event(data: dict[str, Any]) -> Record:
    """Reservation 1 changes (its event 3 is held back); event 4 (reservation 2) is visible."""
    _reservation_changed(data, 1, 12)
    held = event(3, "RESERVATION_EVENT", 1)
    data["events"].append(event(4, "RESERVATION_EVENT", 2))
    return held


@pytest.mark.parametrize(("settings", "lands"), [(SETTINGS, True), (NO_WINDOW, False)])
def test_a_late_event_below_the_cursor_lands_only_with_the_window(
    tmp_path: Path, data: dict[str, Any], settings: IngestSettings, lands: bool
) -> None:
    lake = _lake(tmp_path, "a")
    apply_changes(lake, window_opener(data), settings)  # bootstrap: cursor 2
    before = _status(lake, 1)
    held = _late_and_a_later_event(data)
    apply_changes(lake, window_opener(data), settings)
    assert read_cursor(lake).event_id == 4  # type: ignore[union-attr]
    assert _status(lake, 1) == before != 12  # its event is not visible yet
    data["events"].append(held)  # committed late: id 3 < cursor 4
    report = apply_changes(lake, window_opener(data), settings)
    assert report.cursor_after == 4
    if lands:
        assert _status(lake, 1) == 12
        assert report.plan["window"] == {"read": 2, "applied": 1, "merges_already_landed": 0}
        assert report.plan["refresh"] == {"reservations": 1}
        assert read_cursor(lake).applied_ids == (3, 4)  # type: ignore[union-attr]
    else:  # the old behaviour: the cursor passed id 3, the change is lost for good
        assert _status(lake, 1) == before
        assert report.plan["events"] == 0 and report.plan["window"]["read"] is None


def test_no_event_is_applied_twice(tmp_path: Path, data: dict[str, Any]) -> None:
    lake = _lake(tmp_path, "a")
    apply_changes(lake, window_opener(data), SETTINGS)
    assert _merge_rows(lake, 2) == 1  # the snapshot's merge (event 2)
    first = apply_changes(lake, window_opener(data), SETTINGS)
    # After the bootstrap the applied set is unknown: the window (event 2) is replayed, but its
    # merge row is in the lake already, so it does not land again.
    assert first.plan["window"] == {"read": 1, "applied": 1, "merges_already_landed": 1}
    assert "customer_merges" not in first.tables
    data["customers"] = [c for c in data["customers"] if c["customerId"] != 502]
    held = event(3, "CUSTOMER_EVENT", 501, "MERGE", old=502)
    data["events"].append(event(4, "RESERVATION_EVENT", 2))
    apply_changes(lake, window_opener(data), SETTINGS)
    assert _merge_rows(lake, 3) == 0
    data["events"].append(held)
    report = apply_changes(lake, window_opener(data), SETTINGS)
    assert report.plan["merges"] == 1 and report.plan["window"]["applied"] == 1
    assert _merge_rows(lake, 3) == 1
    assert 502 not in {r["customer_id"] for r in lake.current("customers").to_pylist()}
    for _ in range(2):  # the window still holds events 2..4: none is applied again
        again = apply_changes(lake, window_opener(data), SETTINGS)
        assert again.plan["events"] == 0 and again.plan["window"]["applied"] == 0
        assert not again.tables & {"customers", "customer_merges", "reservations"}
    assert _merge_rows(lake, 3) == 1 and _merge_rows(lake, 2) == 1


def test_a_crash_after_a_late_merge_landed_keeps_the_cursor_and_lands_it_once(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    lake = _lake(tmp_path, "a")
    apply_changes(lake, window_opener(data), SETTINGS)
    data["events"].append(event(4, "RESERVATION_EVENT", 2))
    apply_changes(lake, window_opener(data), SETTINGS)
    before = read_cursor(lake)
    data["customers"] = [c for c in data["customers"] if c["customerId"] != 502]
    data["events"].append(event(3, "CUSTOMER_EVENT", 501, "MERGE", old=502))

    def kill(name: str) -> None:
        if name == "customer_merges":
            raise Boom("killed after the merge row committed")

    with pytest.raises(Boom):
        apply_changes(lake, window_opener(data), SETTINGS, on_landed=kill)
    assert read_cursor(lake) == before  # the applied set did not move either
    assert _merge_rows(lake, 3) == 1
    report = apply_changes(lake, window_opener(data), SETTINGS)  # the restart
    assert report.plan["window"]["applied"] == 1
    assert report.plan["window"]["merges_already_landed"] == 1
    assert _merge_rows(lake, 3) == 1
    assert 3 in read_cursor(lake).applied_ids  # type: ignore[operator, union-attr]


def test_an_old_cursor_row_is_upgraded(tmp_path: Path, data: dict[str, Any]) -> None:
    """A row from before the window (no applied ids, no date): the run finds the mark itself,
    applies the window in full (the merge row is not landed twice) and writes the new fields."""
    lake = _lake(tmp_path, "a")
    apply_changes(lake, window_opener(data), NO_WINDOW)
    lake.write_state(
        CURSOR_STATE,
        "20990101T000000Z-00000000",
        {
            "event_id": 4,
            "event_date": None,
            "business_date": TODAY.isoformat(),
            "batch_id": "20990101T000000Z-00000000",
            "written_at": "2099-01-01T00:00:00+00:00",
        },
    )
    old = read_cursor(lake)
    assert old == Cursor(4, None, TODAY, "20990101T000000Z-00000000", None)
    # event 4 was applied under the old cursor; event 3 (reservation 1) commits late
    _reservation_changed(data, 1, 12)
    data["events"] += [event(4, "RESERVATION_EVENT", 2), event(3, "RESERVATION_EVENT", 1)]
    data["event_reads"] = []
    report = apply_changes(lake, window_opener(data), SETTINGS)
    assert report.plan["window"]["applied"] == 2  # 3 and 4: unknown set, harmless refetch
    assert _status(lake, 1) == 12
    new = read_cursor(lake)
    assert new is not None and new.event_id == 4 and new.applied_ids == (3, 4)
    assert new.event_date == "2026-01-05T00:00:04.000"
    # one window read (the mark came from `latest_event`), one read after the cursor
    floor = datetime(2026, 1, 5, 0, 0, 4) - SETTINGS.event_overlap
    assert data["event_reads"] == [(None, floor, 4), (4, None, None)]


def test_requests_stay_frugal(tmp_path: Path, data: dict[str, Any]) -> None:
    """In the steady state the window costs one small read per run."""
    with_window, without = _lake(tmp_path, "a"), _lake(tmp_path, "b")
    apply_changes(with_window, window_opener(data), SETTINGS)
    apply_changes(without, window_opener(data), NO_WINDOW)
    apply_changes(with_window, window_opener(data), SETTINGS)  # the post-bootstrap replay
    data["events"].append(event(3, "RESERVATION_EVENT", 2))
    counts = []
    for lake, settings in ((with_window, SETTINGS), (without, NO_WINDOW)):
        service = WindowFake(data)
        apply_changes(lake, lambda s=service: s, settings)  # type: ignore[misc]
        counts.append(service.stats["events"])
    assert counts[0] == counts[1] + 1


# -- the pure parts --------------------------------------------------------------------------


def _ev(event_id: int, at: str, kind: str = "RESERVATION_EVENT") -> Record:
    return {"eventId": event_id, "eventType": kind, "entityId": 1, "eventDate": at}


def test_next_cursor_keeps_the_window_ids_and_never_moves_back() -> None:
    overlap = timedelta(minutes=5)
    cursor = Cursor(10, "2026-01-05T10:00:00.000", TODAY, "b0", (9, 10))
    window = [_ev(9, "2026-01-05T09:58:00.000"), _ev(10, "2026-01-05T10:00:00.000")]
    window.append(_ev(7, "2026-01-05T09:56:00.000"))  # late: not applied before
    events = [_ev(11, "2026-01-05T10:02:00.000"), _ev(12, "2026-01-05T10:03:30.000")]
    after = next_cursor(cursor, window, events, overlap=overlap, business_date=TODAY, batch_id="b1")
    assert after.event_id == 12 and after.event_date == "2026-01-05T10:03:30.000"
    # the floor is 09:58:30: 7 and 9 fall out, 10..12 stay
    assert after.applied_ids == (10, 11, 12)
    # no new events: the id and the mark stay; a late event with a lower date does not pull
    # the mark back
    again = next_cursor(
        after,
        [_ev(8, "2026-01-05T10:01:00.000"), *events],
        [],
        overlap=overlap,
        business_date=TODAY,
        batch_id="b2",
    )
    assert again.event_id == 12 and again.event_date == after.event_date
    assert again.applied_ids == (8, 11, 12)
    # no window read: the set is unknown
    assert (
        next_cursor(
            after, None, events, overlap=overlap, business_date=TODAY, batch_id="b3"
        ).applied_ids
        is None
    )


def test_not_yet_applied_skips_listed_ids_and_ids_above_the_cursor() -> None:
    cursor = Cursor(10, "2026-01-05T10:00:00.000", applied_ids=(9, 10))
    window = [
        _ev(7, "x"),
        _ev(9, "x"),
        _ev(10, "x"),
        _ev(7, "x"),  # a repeat
        _ev(11, "x"),  # above the cursor: the main read's
    ]
    assert [e["eventId"] for e in not_yet_applied(window, cursor)] == [7]
    unknown = Cursor(10, None)
    assert [e["eventId"] for e in not_yet_applied(window, unknown)] == [7, 9, 10]


class RefusingWindowFake(WindowFake):
    """A service whose feed refuses eventDate filters (the interface does not show them)."""

    def events(  # type: ignore[override]
        self,
        after_event_id: int | None = None,
        page_size: int | None = None,
        *,
        since: datetime | None = None,
        up_to_event_id: int | None = None,
    ) -> AsyncIterator[list[Record]]:
        if since is None:
            return super().events(after_event_id, page_size)

        async def refused() -> AsyncIterator[list[Record]]:
            raise BadRequest(
                "GET /events: 400", endpoint="/events", server_message="unknown field eventDate"
            )
            yield []  # pragma: no cover

        return refused()


def test_a_service_refusing_the_date_filter_runs_without_the_window(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    lake = _lake(tmp_path, "a")
    apply_changes(lake, window_opener(data), SETTINGS)  # bootstrap: cursor 2
    data["events"].append(event(3, "RESERVATION_EVENT", 1))
    _reservation_changed(data, 1, 12)

    report = apply_changes(lake, lambda: RefusingWindowFake(data), SETTINGS)

    assert report.cursor_after == 3 and _status(lake, 1) == 12  # the new event still applied
    assert report.plan["window"]["read"] is None
    assert any("refused the overlap window's eventDate filter" in n for n in report.notes)
    assert any("unknown field eventDate" in n for n in report.notes)
    assert read_cursor(lake).applied_ids is None  # type: ignore[union-attr]
