"""Finance has no events: each table is re-read from its last successful read (the service's
date) minus an overlap, and the nightly sweep re-reads a longer window and reports what differed.

The fake states its date like the service does (a `Date` header); no run is given a date, so
every window below counts from the service's clock.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from assets.modes import apply_changes, sweep
from assets.settings import IngestSettings
from lake.state import finance_reads, read_as_of
from lake.store import Lake
from service.clock import ServiceClock
from tests.incremental.fakes import fixture
from tests.incremental.id_fakes import IdListFakeService

Record = dict[str, Any]
SETTINGS = IngestSettings(horizon_days=3)  # no date: the service's
FINANCE = {"journal_reports", "journal_entries", "cash_clearances"}


class DatedFake(IdListFakeService):
    """States `data["now"]` in its responses' Date header; filters clearances by date and
    records what finance it was asked for."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.client.clock = ServiceClock()
        self.client.clock.observe(data["now"])  # as the run's first response states it

    def _iter_keyset(
        self, path: str, id_field: str, *, params: dict[str, Any] | None = None, **kw: Any
    ) -> AsyncIterator[list[Record]]:
        if path != "/cashreservations/clearance":
            return super()._iter_keyset(path, id_field, params=params, **kw)
        records = self.data["cash_clearances"]
        for text in (params or {}).get("filter", []):
            self.data["clearance_filters"].append(text)
            field, _, since = text.partition(">:")
            records = [r for r in records if r[field] >= since]
        return self._pages("cash_clearances", records)

    def journal_entries(self, report_id: int) -> AsyncIterator[list[Record]]:
        self.data["entries_asked"].append(report_id)
        return super().journal_entries(report_id)


def _clearance(data: dict[str, Any], cid: int, day: str, **change: Any) -> Record:
    record = {**copy.deepcopy(data["cash_clearances"][0]), "cashClearanceId": cid}
    return {**record, "clearanceDate": day, "clearedAt": f"{day}T21:00:00.000", **change}


def _data() -> dict[str, Any]:
    data = fixture()
    december = {**data["journal_reports"][0], "journalReportId": 20, "reportNumber": 9}
    december.update(periodFrom="2025-12-01", periodTo="2025-12-31")
    data["journal_reports"].append(december)
    data.update(now="Mon, 05 Jan 2026 10:00:00 GMT", clearance_filters=[], entries_asked=[])
    return data


def opener(data: dict[str, Any]) -> Any:
    return lambda: DatedFake(data)


def _clearance_ids(lake: Lake) -> set[int]:
    return set(lake.current_ids("cash_clearances", "cash_clearance_id"))


def test_runs_days_apart_reread_finance_from_the_last_read(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    data = _data()
    first = apply_changes(lake, opener(data), SETTINGS)
    assert first.mode == "bootstrap" and first.as_of is not None
    assert first.as_of.business_date == date(2026, 1, 5)  # the service's, not this machine's
    assert finance_reads(lake) == dict.fromkeys(FINANCE, date(2026, 1, 5))

    # Five days later: clearances of the days between, one entered two days late, one a month
    # late (beyond the overlap: the nightly sweep's).
    data["cash_clearances"] += [
        _clearance(data, 2, "2026-01-06"),
        _clearance(data, 3, "2026-01-09"),
        _clearance(data, 4, "2026-01-03"),
        _clearance(data, 5, "2025-12-20"),
    ]
    data["now"] = "Sat, 10 Jan 2026 06:00:00 GMT"
    data["entries_asked"].clear()
    report = apply_changes(lake, opener(data), SETTINGS)
    assert report.mode == "incremental" and report.day_rolled
    assert report.as_of is not None and report.as_of.business_date == date(2026, 1, 10)
    assert data["clearance_filters"] == ["clearanceDate>:2026-01-03"]  # last read - 2 days
    assert report.diffs["cash_clearances"]["new"] == 3
    assert _clearance_ids(lake) == {1, 2, 3, 4}
    assert sorted(data["entries_asked"]) == [7, 8]  # the reports still open after 2026-01-03
    assert finance_reads(lake) == dict.fromkeys(FINANCE, date(2026, 1, 10))
    assert read_as_of(lake) == report.as_of

    # The nightly sweep: 35 days back; the late clearance and a corrected December report.
    entries = data["journal_entries"]
    data["journal_entries"] = lambda rid: (
        entries(rid)
        + ([{**entries(rid)[0], "journalEntryId": rid * 100 + 50}] if rid == 20 else [])
    )
    data["now"] = "Sun, 11 Jan 2026 02:30:00 GMT"
    data["clearance_filters"].clear()
    swept = sweep(lake, opener(data), SETTINGS)
    assert data["clearance_filters"] == ["clearanceDate>:2025-12-07"]
    assert swept.diffs["cash_clearances"]["new"] == 1
    assert swept.diffs["cash_clearances"]["sample"] == [[5]]
    assert swept.diffs["journal_reports"]["changed"] == 1
    assert swept.diffs["journal_reports"]["sample"] == [[20]]
    assert _clearance_ids(lake) == {1, 2, 3, 4, 5}
    entries_20 = [r for r in lake.current("journal_entries").to_pylist() if r["report_id"] == 20]
    assert len(entries_20) == 4
    # the compare reads those reports' current entries alone: the same rows as the whole
    # table's filtered (the corrected report's newer batch, another report's older one)
    some = lake.current_where("journal_entries", "report_id", [7, 20]).to_pylist()
    every = [r for r in lake.current("journal_entries").to_pylist() if r["report_id"] in (7, 20)]
    assert len(some) > len(entries_20)
    assert sorted(some, key=lambda r: r["journal_entry_id"]) == sorted(
        every, key=lambda r: r["journal_entry_id"]
    )
    with pytest.raises(ValueError, match="neither in"):
        lake.current_where("journal_entries", "type", ["X"])
    assert finance_reads(lake) == dict.fromkeys(FINANCE, date(2026, 1, 11))

    # Nothing new: the sweep reads it all again and lands nothing.
    again = sweep(lake, opener(data), SETTINGS)
    assert again.diffs["cash_clearances"]["new"] == again.diffs["cash_clearances"]["changed"] == 0
    assert again.diffs["journal_reports"]["changed"] == 0
    assert not FINANCE & again.tables


def test_a_lake_without_read_marks_reads_finance_in_full_once(tmp_path: Path) -> None:
    """A lake from before the marks: the first run reads every clearance (no window)."""
    lake = Lake(tmp_path / "lake")
    data = _data()
    apply_changes(lake, opener(data), SETTINGS)
    for path in (lake.root / "_state" / "finance_reads").glob("*.parquet"):
        path.unlink()
    data["cash_clearances"].append(_clearance(data, 6, "2025-11-02"))
    data["now"] = "Tue, 06 Jan 2026 06:00:00 GMT"
    report = apply_changes(lake, opener(data), SETTINGS)
    assert data["clearance_filters"] == []  # no window: everything
    assert report.diffs["cash_clearances"]["new"] == 1 and 6 in _clearance_ids(lake)
    assert finance_reads(lake) == dict.fromkeys(FINANCE, date(2026, 1, 6))
