"""`warehouse.rebuild.rebuild_diffed`: a model rebuilt whole reports the rows only one of its two
versions has, as `except all` both ways would (duplicates counted, nulls equal, the lineage
columns left out when no reader maps them), in one aggregate over both versions."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.warehouse.scenarios import src_model
from warehouse.rebuild import rebuild_diffed


def _setup(rows_before: str, rows_after: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create schema staging")
    con.execute("create table src (k integer, v varchar, batch_id varchar)")
    con.execute(f"insert into src values {rows_before}")
    con.execute("create table staging.m as select * from src")
    con.execute("create table old as select * from src")  # what the test compares with
    con.execute("delete from src")
    con.execute(f"insert into src values {rows_after}")
    return con


def test_the_changed_rows_count_duplicates_and_take_nulls_as_equal(tmp_path: Path) -> None:
    con = _setup(
        "(1, 'a', 'b1'), (1, 'a', 'b1'), (2, 'b', 'b1'), (null, null, 'b1'), (3, 'c', 'b1')",
        "(1, 'a', 'b2'), (2, 'b', 'b2'), (2, 'b', 'b2'), (2, 'b', 'b2'), (null, null, 'b2'), "
        "(3, 'd', 'b2')",
    )
    assert rebuild_diffed(con, src_model(tmp_path), "before", "delta", blind=True) is True
    # one (1, a) gone, two more (2, b), (3, c) became (3, d); the batch ids are left out
    got = con.execute("select * from delta order by all").fetchall()
    assert got == [(1, "a"), (2, "b"), (2, "b"), (3, "c"), (3, "d")]
    expected = con.execute(
        "select * from (select k, v from old except all select k, v from staging.m) "
        "union all select * from (select k, v from staging.m except all select k, v from old) "
        "order by all"
    ).fetchall()
    assert got == expected


def test_the_same_rows_in_a_new_batch_change_nothing_unless_the_lineage_counts(
    tmp_path: Path,
) -> None:
    rows = "(1, 'a', {b}), (null, 'x', {b}), (null, 'x', {b})"
    con = _setup(rows.format(b="'b1'"), rows.format(b="'b2'"))
    assert rebuild_diffed(con, src_model(tmp_path), "before", "delta", blind=True) is False
    assert con.execute("select count(*) from delta").fetchone() == (0,)
    con = _setup(rows.format(b="'b1'"), rows.format(b="'b2'"))
    assert rebuild_diffed(con, src_model(tmp_path), "before", "delta", blind=False) is True
    assert con.execute("select count(*) from delta").fetchone() == (6,)


def test_the_old_table_is_renamed_aside_and_dropped_not_copied(tmp_path: Path) -> None:
    """The old version is the stored table itself, renamed for the diff (a copy read and wrote
    every row) and dropped in the same transaction: after the commit the file holds the new
    table alone, and a rollback leaves the old one where it was."""
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("create schema staging")
    con.execute("create table src (k integer, v varchar, batch_id varchar)")
    con.execute("insert into src values (1, 'a', 'b1'), (2, 'b', 'b1')")
    con.execute("create table staging.m as select * from src")
    con.execute("update src set v = 'c' where k = 2")
    copies: list[str] = []
    execute = con.execute

    class Watched:
        def __getattr__(self, name: str) -> object:
            return getattr(con, name)

        def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
            if 'select * from "staging"."m"' in sql and sql.startswith("create"):
                copies.append(sql)
            return execute(sql, *args)

    for commit in (False, True):
        con.execute("begin")
        changed = rebuild_diffed(Watched(), src_model(tmp_path), "_before_m", "delta", blind=True)  # type: ignore[arg-type]
        assert changed is True
        assert con.execute("select * from delta order by all").fetchall() == [(2, "b"), (2, "c")]
        assert copies == []  # the old rows were not copied into a table of their own
        names = con.execute(
            "select schema_name, table_name from duckdb_tables() order by all"
        ).fetchall()
        assert names == [("main", "delta"), ("main", "src"), ("staging", "m")], names
        con.execute("commit" if commit else "rollback")
        expected = "c" if commit else "b"
        assert con.execute("select v from staging.m where k = 2").fetchone() == (expected,)
    con.close()
    reopened = duckdb.connect(str(db), read_only=True)
    assert reopened.execute(
        "select table_name from duckdb_tables() where schema_name = 'staging'"
    ).fetchall() == [("m",)]
