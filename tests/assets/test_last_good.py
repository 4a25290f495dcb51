"""Quarantine keeps the last good version: a record or child that fails validation when it is
landed again leaves its previous version current, and nothing else of its parent is lost; in
every run mode (full extract, webhook refresh, sweep), and in the warehouse's lake_current views.
"""

from __future__ import annotations

import copy
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from assets.catalogue import CATALOGUE
from assets.full import land_full
from assets.modes import apply_changes, refresh_reservations, sweep
from assets.run_report import RunReport
from assets.settings import IngestSettings
from lake.store import Lake
from tests.assets.fake_service import FakeService, default_fixture, reservation
from tests.incremental.fakes import fixture
from tests.incremental.id_fakes import id_opener
from warehouse.lake import attach_lake

SETTINGS = IngestSettings(today=date(2026, 6, 1), horizon_days=3)
SPECS = [CATALOGUE.by_name[n] for n in ("reservations", "journal_reports", "journal_entries")]
FIRST, SECOND = "20260101T000000Z-00000001", "20260102T000000Z-00000002"
Record = dict[str, Any]


def _full(lake: Lake, data: dict[str, Any], batch_id: str) -> RunReport:
    return land_full(lake, lambda: FakeService(data), SETTINGS, batch_id=batch_id, specs=SPECS)


def _lines(lake: Lake, rid: int) -> dict[int, tuple[float, str]]:
    """Bill lines of a reservation: line id -> (total, batch it came from)."""
    return {
        r["reservation_bill_line_id"]: (float(r["total"]), r["_batch_id"])
        for r in lake.current("bill_lines").to_pylist()
        if r["reservation_id"] == rid
    }


def _reservations(lake: Lake) -> dict[int, Record]:
    return {r["reservation_id"]: r for r in lake.current("reservations").to_pylist()}


def _changed(rid: int) -> Record:
    """Reservation `rid` confirmed again (status 12) with new totals on its customer bill."""
    record = reservation(rid, status=12)
    record["customerBill"][1]["total"] = 999.0
    return record


def _with_bad_line(rid: int, **damage: Any) -> Record:
    """`_changed(rid)` whose first customer bill line is malformed."""
    record = _changed(rid)
    record["customerBill"][0].update(damage or {"total": "abc"})
    return record


def _same_in_warehouse(lake: Lake, table: str, key: str) -> None:
    """The warehouse's lake_current view shows what `Lake.current` shows."""
    con = duckdb.connect()
    try:
        con.execute("set TimeZone = 'UTC'")
        attach_lake(con, lake.root)
        rows = con.sql(f"select {key}, _batch_id from lake_current.{table}").fetchall()
    finally:
        con.close()
    current = lake.current(table)
    keys, batches = current.column(key).to_pylist(), current.column("_batch_id").to_pylist()
    assert sorted(rows) == sorted(zip(keys, batches, strict=True))


def test_a_relanded_reservation_keeps_its_bad_lines_last_good_version(tmp_path: Path) -> None:
    lake = Lake(tmp_path / "lake")
    _full(lake, default_fixture(), FIRST)
    data = default_fixture()
    data["reservation_details"][1] = _with_bad_line(2)
    data["reservation_details"][2] = _changed(3)

    report = _full(lake, data, SECOND)

    landed = report.landed["reservations"]
    assert (landed.quarantined, landed.partial) == (1, 1)
    assert landed.carried == {"bill_lines": 1}
    rows = _reservations(lake)
    assert rows[2]["status"] == 12 and rows[3]["status"] == 12  # the rest is updated
    # line 201 came malformed: its last good version stays; the reservation's others are new
    assert _lines(lake, 2) == {
        201: (400.10, SECOND),
        202: (999.0, SECOND),
        203: (0.0, SECOND),
        204: (19.99, SECOND),
        205: (0.1, SECOND),
    }
    assert _lines(lake, 3)[302] == (999.0, SECOND)
    assert {r["reservation_id"] for r in lake.current("reserved_resources").to_pylist()} == {
        1,
        2,
        3,
        4,
        5,
    }
    (quarantined,) = pq.read_table(lake.quarantine_files("reservations")[-1]).to_pylist()
    assert quarantined["reason"] == "bill_lines.total: not an amount ('abc')"
    assert '"reservationId":2' in quarantined["record"]
    assert lake.duplicate_keys("bill_lines") == 0
    _same_in_warehouse(lake, "bill_lines", "reservation_bill_line_id")
    _same_in_warehouse(lake, "reservations", "reservation_id")


def test_a_bad_line_whose_key_cannot_be_read_keeps_the_lines_the_new_version_lacks(
    tmp_path: Path,
) -> None:
    lake = Lake(tmp_path / "lake")
    _full(lake, default_fixture(), FIRST)
    data = default_fixture()
    data["reservation_details"][1] = _with_bad_line(2, reservationBillLineId="abc")

    report = _full(lake, data, SECOND)

    assert report.landed["reservations"].partial == 1
    assert _reservations(lake)[2]["status"] == 12
    assert _lines(lake, 2)[201] == (400.10, SECOND)
    assert _lines(lake, 2)[202] == (999.0, SECOND)


def test_a_new_bad_line_keeps_the_whole_reservation_as_it_was(tmp_path: Path) -> None:
    """With no last good version to keep, the record is not landed with a line missing."""
    lake = Lake(tmp_path / "lake")
    _full(lake, default_fixture(), FIRST)
    before = _lines(lake, 2)
    data = default_fixture()
    record = _changed(2)
    record["agentBill"].append({**record["agentBill"][0], "reservationBillLineId": 299})
    record["agentBill"][-1]["total"] = "abc"
    data["reservation_details"][1] = record
    data["reservation_details"].append(_with_bad_line(9))  # new, with a bad line: not landed

    report = _full(lake, data, SECOND)

    landed = report.landed["reservations"]
    assert (landed.quarantined, landed.partial, landed.carried) == (2, 0, {})
    rows = _reservations(lake)
    assert rows[2]["status"] == 21 and rows[2]["_batch_id"] == FIRST
    assert _lines(lake, 2) == before
    assert 9 not in rows


def test_a_relanded_journal_report_keeps_its_bad_entrys_last_good_version(
    tmp_path: Path,
) -> None:
    """Entries are children of their report but a stream of their own."""
    lake = Lake(tmp_path / "lake")
    _full(lake, default_fixture(), FIRST)
    data = default_fixture()
    entries = data["journal_entries"]

    def damaged(report_id: int) -> list[Record]:
        out = copy.deepcopy(entries(report_id))
        out[0]["mutationDate"] = "2026-13-45"  # key readable
        out[1]["creditVatIncluded"] = 5.0  # changed
        if report_id == 8:
            out[2]["journalEntryId"] = None  # key unreadable: the report's missing entries stay
        return out

    data["journal_entries"] = damaged

    report = _full(lake, data, SECOND)

    assert report.landed["journal_entries"].quarantined == 3
    assert report.landed["journal_entries"].carried == {"journal_entries": 3}
    rows = {r["journal_entry_id"]: r for r in lake.current("journal_entries").to_pylist()}
    assert sorted(rows) == [700, 701, 702, 800, 801, 802]
    assert {i: float(r["credit_vat_included"]) for i, r in rows.items()} == {
        700: 109.0,
        701: 5.0,
        702: 109.0,
        800: 109.0,
        801: 5.0,
        802: 109.0,
    }
    assert {r["_batch_id"] for r in rows.values()} == {SECOND}
    assert lake.duplicate_keys("journal_entries") == 0
    _same_in_warehouse(lake, "journal_entries", "journal_entry_id")


@pytest.mark.parametrize("mode", ["webhook", "sweep"])
def test_held_landings_keep_the_last_good_version_too(tmp_path: Path, mode: str) -> None:
    lake = Lake(tmp_path / "lake")
    data = fixture()
    apply_changes(lake, id_opener(data), SETTINGS)
    first = _lines(lake, 2)
    record = _with_bad_line(2)
    record["modifiedDate"] = "2026-01-09T00:00:00.000"  # the sweep reads what was modified
    data["reservation_details"][1] = record

    if mode == "webhook":
        report = refresh_reservations(lake, id_opener(data), SETTINGS, [2])
    else:
        report = sweep(lake, id_opener(data), SETTINGS)

    landed = report.landed["reservations"]
    assert (landed.quarantined, landed.partial, landed.tombstones) == (1, 1, 0)
    assert _reservations(lake)[2]["status"] == 12
    lines = _lines(lake, 2)
    assert lines[201] == (first[201][0], report.batch_id)
    assert lines[202] == (999.0, report.batch_id)
    assert sorted(lines) == sorted(first)
