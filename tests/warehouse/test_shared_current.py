"""A lake parent's narrowed current state shared by the reads that follow it
(`warehouse.shared_current`): computed once into a temp table for the first keys, taken from it
for keys among those, computed again for keys outside; the same rows as reading it whole."""

from __future__ import annotations

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch, two_batches
from warehouse.lake import attach_lake, narrowed_current_sql
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


def test_the_lake_rows_a_shared_state_read_are_taken_for_keys_among_them(lake: Lake) -> None:
    """The parent's lake rows (every batch: reservation 2's two versions) that its shared state
    was computed from serve a model reading the raw rows (`core.fct_reservation_versions`) for
    keys among those; none before the state is computed, nor for keys outside."""
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
    assert shared.rows("first", _matching("first"))("reservations", key) is None
    shared.known("first", _matching("first"))("reservations", key)
    for keys, held in (("first", True), ("outside", False)):
        found = shared.rows(keys, _matching(keys))("reservations", key)
        assert (found is not None) == held, keys
        if found is not None:
            got = _rows(con, f"select * from {found}")
            want = f"select * from lake.reservations where {_matching(keys)(key)}"
            assert got == _rows(con, want)
            assert len(got) == 2  # both batches' versions of reservation 2
    con.close()
