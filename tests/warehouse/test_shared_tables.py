"""A model table stored as built, read by its key by several models in one refresh
(`core.fct_bill_lines`: 12.8 M lines in no order of their reservation, read by five models for
an hour's reservations): the first read writes the keys' rows to a temp table, a later one
filters it, adding the rows of its keys outside those first (`warehouse.shared_current`).
Each read gives the rows the plain filter gives (docs/benchmarks.md, session 19)."""

from __future__ import annotations

import duckdb

from warehouse.models import discover_models
from warehouse.shared_current import SharedCurrents, shared_reads

SOURCE = "core.fct_bill_lines"
KEY = ("reservation_id",)


def _on(keys: str) -> str:
    return f"(reservation_id in (select k from {keys}) or reservation_id is null and exists (select 1 from {keys} where k is null))"


def _rows(con: duckdb.DuckDBPyConnection, relation: str) -> list[tuple[object, ...]]:
    return sorted(con.execute(f"select * from {relation}").fetchall(), key=repr)


def _held(con: duckdb.DuckDBPyConnection) -> list[str]:
    found = con.execute("select table_name from duckdb_tables() where database_name = 'temp'")
    return sorted(n for (n,) in found.fetchall() if n.startswith("_held_core"))


def test_the_tables_stored_as_built_are_the_ones_shared() -> None:
    """Only a table stored as built: one stored in its key's order is read by min/max (the
    reservations since session 23, the journal entries read by one model by their key)."""
    assert shared_reads(discover_models().values()) == {
        (SOURCE, KEY),
        ("core.fct_reservations", KEY),
    }


def test_a_shared_read_gives_the_plain_filters_rows() -> None:
    con = duckdb.connect()
    con.execute("create schema core")
    con.execute(f"create table {SOURCE} (reservation_id bigint, line int)")
    con.execute(
        f"insert into {SOURCE} values (1, 10), (1, 11), (2, 20), (3, 30), (4, 40), (null, 50)"
    )
    for name, keys in (
        ("first", [2, 3]),
        ("among", [3]),
        ("outside", [1, 3, None]),
        ("rest", [1, None]),
    ):
        con.execute(f"create temp table {name} as select unnest(?::bigint[]) as k", [keys])
    shared = SharedCurrents(con, reads={(SOURCE, KEY)})
    for keys, held_rows in (("first", 2), ("among", 2), ("outside", 5), ("rest", 5)):
        on = _on(keys)
        relation = shared.table_rows(SOURCE, KEY, keys, on)
        assert relation is not None
        assert _rows(con, relation) == _rows(con, f"(select * from {SOURCE} where {on})"), keys
        assert _held(con) == ["_held_core_fct_bill_lines_0"]  # one temp table, grown
        (n,) = con.execute('select count(*) from "_held_core_fct_bill_lines_0"').fetchone() or ()
        assert n == held_rows, keys
    # a read nobody else makes: the plain filter
    assert shared.table_rows("core.fct_stay_nights", KEY, "first", _on("first")) is None


def test_the_models_own_new_rows_are_read_for_its_keys() -> None:
    """After its refresh by key, the model's new rows (`_new_<base>`) are the table's rows for
    its keys: a reader of keys among them filters those, without a scan of the table; keys
    outside add their rows to them."""
    con = duckdb.connect()
    con.execute("create schema core")
    con.execute(f"create table {SOURCE} (reservation_id bigint, line int)")
    con.execute(f"insert into {SOURCE} values (1, 10), (2, 20), (3, 30)")
    con.execute("create temp table new_rows as select * from core.fct_bill_lines where line > 10")
    con.execute("create temp table own as select unnest([2, 3]) as k")
    con.execute("create temp table among as select unnest([3]) as k")
    con.execute("create temp table outside as select unnest([1]) as k")
    shared = SharedCurrents(con, reads={(SOURCE, KEY)})
    shared.hold(SOURCE, KEY, "own", "new_rows")
    assert shared.table_rows(SOURCE, KEY, "among", _on("among")) == (
        f"(select * from new_rows where {_on('among')})"
    )
    relation = shared.table_rows(SOURCE, KEY, "outside", _on("outside"))
    assert relation is not None and _rows(con, relation) == [(1, 10)]
    assert _held(con) == []  # no copy written
    shared.hold("core.fct_stay_nights", KEY, "own", "new_rows")  # a read nobody else makes
    assert ("core.fct_stay_nights", KEY) not in shared.tables_held
