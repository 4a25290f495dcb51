"""A lake parent's narrowed current state shared by the reads that follow it
(`warehouse.shared_current`): computed once into a temp table for the first keys, taken from it
for keys among those, computed again for keys outside; the same rows as reading it whole."""

from __future__ import annotations

import re

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch, two_batches
from warehouse.lake import attach_lake, lake_snapshot, narrowed_current_sql
from warehouse.shared_current import Matching, SharedCurrents


def _matching(keys: str) -> Matching:
    return lambda columns: f"({columns[0]} in (select k from {keys}))"


def _temps(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute("select table_name from duckdb_tables() where database_name = 'temp'")
    return {name for (name,) in rows.fetchall() if name.startswith("_current_")}


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[object, ...]]:
    return sorted(con.execute(f"select * from ({sql})").fetchall(), key=repr)


def test_a_parents_narrowed_state_is_computed_once_for_keys_among_the_first(lake: Lake) -> None:
    two_batches(lake)
    con = duckdb.connect()
    attach_lake(con, lake.root)
    con.execute("create temp table first as select unnest([2, 3]) as k")
    con.execute("create temp table among as select unnest([3]) as k")
    con.execute("create temp table outside as select unnest([1, 3]) as k")
    shared = SharedCurrents(con)
    key = ("reservation_id",)
    for keys, temps in (("first", 1), ("among", 1), ("outside", 2)):
        match = _matching(keys)
        known = shared.known(keys, match)
        for table in ("reservations", "bill_lines", "reserved_resources"):
            got = _rows(con, narrowed_current_sql(table, key, match, known))
            assert got == _rows(con, narrowed_current_sql(table, key, match)), (keys, table)
            assert got, (keys, table)
        # the reservations' state once for the first keys, once more for keys outside them;
        # the children, read by one model each, are not kept
        assert len(_temps(con)) == temps, keys
        assert len(shared.temps) == 2 * temps  # each with the lake rows it was computed from
    con.close()


def _raw(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    """The lake rows the newest shared state was computed from (`_rows_reservations_<n>`)."""
    found = con.execute("select table_name from duckdb_tables() where database_name = 'temp'")
    names = [n for (n,) in found.fetchall() if n.startswith("_rows_reservations")]
    newest = max(names, key=lambda n: int(n.rsplit("_", 1)[1]))
    return sorted(con.execute(f'select reservation_id, _batch_kind from "{newest}"').fetchall())


def test_a_top_level_parents_state_is_read_from_each_keys_latest_batch(lake: Lake) -> None:
    """A reservation's current row is in its latest batch: the shared state reads every
    column of those batches' rows only (reservation 2's second version, not its first), and
    gives the rows the whole current state gives; a key whose latest batch is the full one
    takes that batch's rows (docs/benchmarks.md, session 23)."""
    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-04", unit_id=1000).reservation(
        2, "2025-01-02", "2025-01-05", unit_id=1001
    ).flush(lake, kind="full")
    Batch().reservation(2, "2025-01-02", "2025-01-06", unit_id=1001, nightly="90.00").flush(lake)
    con = duckdb.connect()
    attach_lake(con, lake.root)
    con.execute("create temp table first as select unnest([2]) as k")
    con.execute("create temp table outside as select unnest([1, 2]) as k")
    shared = SharedCurrents(con)
    key = ("reservation_id",)
    for keys, raw in (
        ("first", [(2, "delta")]),
        # the full batch is key 1's latest: its rows of both keys are read, and the delta's
        ("outside", [(1, "full"), (2, "delta"), (2, "full")]),
    ):
        match = _matching(keys)
        got = _rows(
            con, narrowed_current_sql("reservations", key, match, shared.known(keys, match))
        )
        want = f"select * from lake_current.reservations where {match(key)}"
        assert got == _rows(con, want), keys
        assert [r[0] for r in got] == sorted({k for k, _ in raw})
        assert _raw(con) == raw, keys
    con.close()


def test_a_childs_read_opens_only_the_files_its_parents_batches_may_be_in(lake: Lake) -> None:
    """Reservation 2's current row is in the second batch: its bill lines are read from that
    batch's file and from a compaction's file named later (which may hold any older batch's
    rows: here a copy of the full batch's, as a crash mid-compaction leaves them), not from the
    full batch's file (which the scan would open only to skip by its statistics); the same rows
    as the whole current state. Keys whose current rows reach the full batch read every file
    (docs/benchmarks.md, session 24)."""
    Batch().reference(units=2).reservation(1, "2025-01-01", "2025-01-04", unit_id=1000).reservation(
        2, "2025-01-02", "2025-01-05", unit_id=1001
    ).flush(lake, kind="full")
    Batch().reservation(2, "2025-01-02", "2025-01-06", unit_id=1001, nightly="90.00").flush(lake)
    full, second = sorted((lake.root / "bill_lines").glob("*.parquet"))
    compacted = lake.root / "bill_lines" / f"{lake.new_batch_id()}-00000.parquet"
    compacted.write_bytes(full.read_bytes())
    con = duckdb.connect()
    with lake_snapshot():
        attach_lake(con, lake.root)
        shared = SharedCurrents(con)
        key = ("reservation_id",)
        for keys, opened in (("[2]", [second.name, compacted.name]), ("[1, 2]", [])):
            name = f"k{len(keys)}"
            con.execute(f"create temp table {name} as select unnest({keys}) as k")
            match = _matching(name)
            sql = narrowed_current_sql(
                "bill_lines", key, match, shared.known(name, match), shared.child_rows
            )
            want = f"select * from lake_current.bill_lines where {match(key)}"
            assert _rows(con, sql) == _rows(con, want), keys
            assert _rows(con, sql), keys
            named = re.findall(r"[0-9T]+Z-[0-9a-f]{8}-\d{5}\.parquet", sql)
            assert sorted(set(named)) == opened, keys
            assert ('lake."bill_lines"' in sql) == (not opened), keys  # else the whole view
    con.close()
