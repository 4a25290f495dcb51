"""An id asked for and not returned is confirmed before it is removed.

A refetch that comes back empty once (the service answered 204, a replica lagged) must not
tombstone the reservations it asked for; one that is really gone is removed after a second ask;
when none of several ids comes back even twice, nothing is removed and the run says so.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from assets.modes import apply_changes
from assets.settings import IngestSettings
from lake.store import Lake
from tests.incremental.fakes import IncrementalFakeService, changed_reservation, event, fixture

SETTINGS = IngestSettings(today=date(2026, 6, 1), horizon_days=3)


class Flaky(IncrementalFakeService):
    """Answers the first `empty` by-id reads of reservations with no content."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)

    def reservation_details(self, ids: Any = None, **kw: Any) -> Any:
        if ids is not None and self.data.get("empty", 0) > 0:
            self.data["empty"] -= 1
            return self._pages("reservation_details", [])
        return super().reservation_details(ids=ids, **kw)


def _opener(data: dict[str, Any]) -> Any:
    return lambda: Flaky(data)


def _live(lake: Lake) -> dict[int, int]:
    return {r["reservation_id"]: r["status"] for r in lake.current("reservations").to_pylist()}


def _bootstrapped(tmp_path: Path) -> tuple[Lake, dict[str, Any]]:
    lake, data = Lake(tmp_path / "lake"), fixture()
    apply_changes(lake, _opener(data), SETTINGS)
    return lake, data


def _confirm(data: dict[str, Any], *rids: int) -> None:
    data["reservation_details"] = [
        changed_reservation(r["reservationId"], status=21) if r["reservationId"] in rids else r
        for r in data["reservation_details"]
    ]
    first = max(e["eventId"] for e in data["events"]) + 1
    data["events"] += [event(first + i, "RESERVATION_EVENT", rid) for i, rid in enumerate(rids)]


def test_one_empty_answer_removes_nothing(tmp_path: Path) -> None:
    lake, data = _bootstrapped(tmp_path)
    before = _live(lake)
    _confirm(data, 1, 2)
    data["empty"] = 1  # the first refetch comes back empty
    report = apply_changes(lake, _opener(data), SETTINGS)
    assert report.landed["reservations"].tombstones == 0
    after = _live(lake)
    assert set(after) == set(before)
    assert after[1] == after[2] == 21


def test_an_id_gone_for_good_is_removed_after_the_second_ask(tmp_path: Path) -> None:
    lake, data = _bootstrapped(tmp_path)
    _confirm(data, 1)
    data["events"].append(event(99, "RESERVATION_EVENT", 4))
    data["reservation_details"] = [
        r for r in data["reservation_details"] if r["reservationId"] != 4
    ]
    report = apply_changes(lake, _opener(data), SETTINGS)
    assert report.landed["reservations"].tombstones == 1
    assert 4 not in _live(lake) and _live(lake)[1] == 21


def test_nothing_back_twice_removes_nothing_and_says_so(tmp_path: Path) -> None:
    lake, data = _bootstrapped(tmp_path)
    before = _live(lake)
    _confirm(data, 1, 2)
    data["empty"] = 2  # both asks come back empty
    report = apply_changes(lake, _opener(data), SETTINGS)
    assert set(_live(lake)) == set(before)
    assert any("none of the 2 records asked for by id came back" in n for n in report.notes)
