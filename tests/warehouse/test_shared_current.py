"""A lake parent's narrowed current state shared by the reads that follow it
(`warehouse.shared_current`): computed once into a temp table for the first keys, taken from it
for keys among those, computed again for keys outside; the same rows as reading it whole."""

from __future__ import annotations

import duckdb

from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
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
    Batch().reference(units=3).reservation(1, "2025-01-01", "2025-01-04", unit_id=1000).reservation(
        2, "2025-01-02", "2025-01-05", unit_id=1001
    ).reservation(3, "2025-01-03", "2025-01-06", unit_id=1002).flush(lake, kind="full")
    Batch().reservation(2, "2025-01-02", "2025-01-06", unit_id=1001, nightly="90.00").reservation(
        3, "2025-01-03", "2025-01-06", unit_id=1002, status=-12, cancelled="2024-12-20"
    ).flush(lake)
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
        assert len(shared.temps) == temps
    con.close()
