"""The lake: atomic batch writes, the current-state rule, idempotent batches, compaction."""

from __future__ import annotations

import os
import signal
import time
from datetime import UTC, datetime, timedelta

import duckdb
import pyarrow as pa
import pytest

from lake.compaction import compact
from lake.parts import new_batch_id
from lake.schema import TIMESTAMP
from lake.store import Lake, connect
from lake.tables import TABLES

T0 = datetime(2026, 1, 1, tzinfo=UTC)
B1, B2, B3 = (new_batch_id(T0 + timedelta(hours=h), f"{h:08x}") for h in (1, 2, 3))


def _rows(table: str, batch: str, kind: str, rows: list[dict], deleted: bool = False) -> pa.Table:
    schema = TABLES[table].arrow_schema()
    lineage = {
        "_batch_id": batch,
        "_batch_kind": kind,
        "_extracted_at": T0,
        "_source": "/test",
        "_is_deleted": deleted,
        "_extra": None,
    }
    return pa.Table.from_pylist([{**lineage, **r} for r in rows], schema=schema)


def _write(lake: Lake, table: str, batch: str, kind: str, rows: list[dict], **kw: bool) -> None:
    writer = lake.writer(TABLES[table], batch)
    writer.add(_rows(table, batch, kind, rows, **kw))
    writer.commit()


def _current(lake: Lake, table: str, key: str, col: str) -> dict:
    return {r[key]: r[col] for r in lake.current(table).to_pylist()}


def test_batch_id_shape() -> None:
    assert new_batch_id(T0, "DEADBEEF99") == "20260101T000000Z-deadbeef"


def test_parts_stay_invisible_until_commit_and_abort_leaves_nothing(lake: Lake) -> None:
    writer = lake.writer(TABLES["companies"], B1, flush_rows=1)
    writer.add(_rows("companies", B1, "full", [{"company_id": 1}]))
    writer.add(_rows("companies", B1, "full", [{"company_id": 2}]))
    folder = lake.table_dir("companies")
    assert lake.files("companies") == [] and len(list(folder.glob("*.tmp"))) == 2
    writer.abort()
    assert list(folder.iterdir()) == []


def test_commit_renames_parts_and_leaves_no_temp_files(lake: Lake) -> None:
    writer = lake.writer(TABLES["companies"], B1, flush_rows=2)
    for i in range(5):
        writer.add(_rows("companies", B1, "full", [{"company_id": i}]))
    files = writer.commit()
    assert [f.name for f in files] == [f"{B1}-{i:05d}.parquet" for i in range(3)]
    assert not list(lake.table_dir("companies").glob("*.tmp"))
    assert lake.current("companies").num_rows == 5


def test_rewriting_a_batch_is_idempotent(lake: Lake) -> None:
    """A re-executed run (same batch id) replaces its files, including surplus parts."""
    writer = lake.writer(TABLES["companies"], B1, flush_rows=1)
    for i in range(3):
        writer.add(_rows("companies", B1, "full", [{"company_id": i, "name": "old"}]))
    writer.commit()
    writer = lake.writer(TABLES["companies"], B1, flush_rows=10)
    writer.add(_rows("companies", B1, "full", [{"company_id": i, "name": "new"} for i in range(3)]))
    writer.commit()
    assert [f.name for f in lake.files("companies")] == [f"{B1}-00000.parquet"]
    assert _current(lake, "companies", "company_id", "name") == {0: "new", 1: "new", 2: "new"}


def test_current_state_rule(lake: Lake) -> None:
    _write(lake, "companies", B1, "full", [{"company_id": i, "name": f"v1-{i}"} for i in (1, 2, 3)])
    writer = lake.writer(TABLES["companies"], B2)  # one writer per table and batch
    writer.add(_rows("companies", B2, "delta", [{"company_id": 1, "name": "v2-1"}]))
    writer.add(_rows("companies", B2, "delta", [{"company_id": 2}], deleted=True))
    writer.commit()
    assert _current(lake, "companies", "company_id", "name") == {1: "v2-1", 3: "v1-3"}
    # a later full batch drops keys it no longer has
    _write(lake, "companies", B3, "full", [{"company_id": 3, "name": "v3-3"}])
    assert _current(lake, "companies", "company_id", "name") == {3: "v3-3"}


def test_children_follow_their_parents_batch(lake: Lake) -> None:
    _write(lake, "reservations", B1, "full", [{"reservation_id": 1}, {"reservation_id": 2}])
    _write(
        lake,
        "bill_lines",
        B1,
        "full",
        [
            {"reservation_bill_line_id": 10, "reservation_id": 1},
            {"reservation_bill_line_id": 11, "reservation_id": 1},
            {"reservation_bill_line_id": 20, "reservation_id": 2},
        ],
    )
    # reservation 1 refetched with one line only: its old line 11 is no longer current
    _write(lake, "reservations", B2, "delta", [{"reservation_id": 1}])
    _write(lake, "bill_lines", B2, "delta", [{"reservation_bill_line_id": 10, "reservation_id": 1}])
    lines = _current(lake, "bill_lines", "reservation_bill_line_id", "_batch_id")
    assert lines == {10: B2, 20: B1}


def test_compaction_keeps_current_state_and_bounds_files(lake: Lake) -> None:
    _write(lake, "reservations", B1, "full", [{"reservation_id": i} for i in range(1, 4)])
    _write(lake, "reservations", B2, "delta", [{"reservation_id": 2, "status": 21}])
    _write(lake, "reservations", B3, "delta", [{"reservation_id": 3}], deleted=True)
    _write(
        lake,
        "bill_lines",
        B1,
        "full",
        [{"reservation_bill_line_id": i, "reservation_id": i} for i in range(1, 4)],
    )
    _write(lake, "bill_lines", B2, "delta", [{"reservation_bill_line_id": 22, "reservation_id": 2}])
    before = {t: lake.current(t).sort_by(TABLES[t].key[0]) for t in ("reservations", "bill_lines")}
    for table in ("bill_lines", "reservations"):
        result = compact(lake, table)
        assert result.files_after == 1 and len(lake.files(table)) == 1
        assert not list(lake.table_dir(table).glob("*.tmp"))
    for table, expected in before.items():
        assert lake.current(table).sort_by(TABLES[table].key[0]).equals(expected)


def test_compaction_crash_before_delete_leaves_current_state_intact(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(lake, "companies", B1, "full", [{"company_id": 1, "name": "a"}])
    _write(lake, "companies", B2, "delta", [{"company_id": 1, "name": "b"}])
    monkeypatch.setattr("pathlib.Path.unlink", lambda *a, **k: (_ for _ in ()).throw(OSError))
    with pytest.raises(OSError):
        compact(lake, "companies")
    assert len(lake.files("companies")) == 3  # new file written, old ones still there
    assert _current(lake, "companies", "company_id", "name") == {1: "b"}


def test_duplicate_keys_in_latest_batch_are_detected(lake: Lake) -> None:
    _write(lake, "companies", B1, "full", [{"company_id": 1}, {"company_id": 1}])
    assert lake.duplicate_keys("companies") == 1


@pytest.mark.parametrize("pass_rows", [4_000_000, 3, 1], ids=["one pass", "passes", "row"])
def test_duplicate_keys_count_only_the_latest_batch_of_each_key(
    lake: Lake, monkeypatch: pytest.MonkeyPatch, pass_rows: int
) -> None:
    """A key twice in its latest batch counts once; twice in an older batch that a later batch
    supersedes, not at all; the same in one pass or in passes over shares of the keys."""
    monkeypatch.setattr("lake.store.DUPLICATE_PASS_ROWS", pass_rows)
    _write(lake, "companies", B1, "full", [{"company_id": i} for i in (1, 1, 2, 2, 3, 4, 4)])
    _write(lake, "companies", B2, "delta", [{"company_id": i} for i in (2, 3, 3, 4, 4, 5)])
    # 1: twice in B1, its latest; 2: twice in B1, once in B2; 3 and 4: twice in B2
    assert lake.duplicate_keys("companies") == 3
    day = datetime(2026, 1, 10).date()
    prices = [
        {"resource_id": r, "arrival_date": day, "duration": d, "rate_type_id": 1}
        for r, d in ((1, 7), (1, 7), (1, 3), (2, 7))
    ]
    _write(lake, "availability_prices", B1, "full", prices)
    assert lake.duplicate_keys("availability_prices") == 1
    _write(lake, "availability_prices", B2, "delta", prices[:1])
    assert lake.duplicate_keys("availability_prices") == 0


def test_state_newest_wins(lake: Lake) -> None:
    assert lake.read_state("cursor") is None
    lake.write_state("cursor", B1, {"cursor": 5})
    lake.write_state("cursor", B2, {"cursor": 9})
    assert lake.read_state("cursor") == {"cursor": 9}


def test_empty_table_has_typed_schema(lake: Lake) -> None:
    empty = lake.current("rates")
    assert empty.num_rows == 0 and empty.schema.field("_extracted_at").type == TIMESTAMP


def test_reader_connections_are_independent() -> None:
    """`lake.store.connect` hands out cursors of one in-memory database: each has its own
    registered tables and temp tables, in UTC, and closing one leaves the others working."""
    with connect() as a, connect() as b:
        a.register("wanted", pa.table({"x": [1, 2]}))
        a.execute("create temp table seen as select 1 as n")
        b.execute("create temp table seen as select 2 as n")
        assert a.execute("select n from seen").fetchall() == [(1,)]
        assert b.execute("select n from seen").fetchall() == [(2,)]
        with pytest.raises(duckdb.CatalogException):
            b.execute("select * from wanted")
        a.close()
        assert b.execute("select current_setting('TimeZone')").fetchone() in {
            ("UTC",),
            ("Etc/UTC",),
        }
    with connect() as c, pytest.raises(duckdb.CatalogException):  # a later reader sees none
        c.execute("select * from seen")


def test_a_forked_child_reads_the_lake_with_a_database_of_its_own() -> None:
    """A child forked after the parent read the lake opens its own reader database (the
    parent's, closed there, would crash it) and the parent's keeps working."""
    with connect() as con:
        assert con.execute("select 1").fetchone() == (1,)
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only when its read works
        ok = False
        try:
            with connect() as con:
                ok = con.execute("select 2").fetchone() == (2,)
        finally:
            os._exit(0 if ok else 1)
    status = None
    for _ in range(600):  # a child stuck closing the parent's database is killed, not awaited
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child never finished its read")
    assert os.waitstatus_to_exitcode(status) == 0
    with connect() as con:
        assert con.execute("select 3").fetchone() == (3,)
