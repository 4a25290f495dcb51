"""The rows a delete+insert by key really changed (`warehouse.maintain`): of the rows of the
affected keys before it and after it, only those that differ.

An hour's stays reach a third of the nights, but leave most unit nights of those nights as they
were: handing every row of the affected keys to the readers (old and new) made them search
millions of rows for the few that moved. The old rows the new ones do not have are the removed
rows, the new rows the old ones did not have the added rows (duplicates count, nulls compare
equal, as `except all` both ways); a key whose rows came back the same adds nothing. One
aggregate over both sides counting -1 / +1 per row: `except all` numbers every row with a
window first, about five times the CPU at millions of rows (docs/benchmarks.md, session 12).

`replace_rows` is the delete+insert itself. The old rows are copied out before the delete only
for a model that some model reads (the copy is the costly part: it reads every column of the
whole table, where the delete reads the key columns); the new rows are computed once into a temp
table and inserted from it, rather than read back from the table after the insert.
"""

from __future__ import annotations

import duckdb

from lake.sql import quote_ident

# the column of `_old_<base>` holding each old row's row id (no model column starts with `_`)
ROWID = "_old_rowid"


def keep_differing(con: duckdb.DuckDBPyConnection, base: str) -> tuple[list[str], list[str], int]:
    """From the temp tables `_old_<base>` and `_new_<base>` (a key's rows before and after),
    write the table `_diff_<base>` of the rows that differ and the views `_removed_<base>`,
    `_added_<base>` and `_changed_<base>` (both) over it. Returns the temp tables and the
    views it wrote, and how many rows differ. Views rather than tables: the differing rows are
    few and read once or twice, where each temp table costs a statement's fixed cost (~3-6 ms
    of CPU: three per model by key)."""
    old, new = quote_ident(f"_old_{base}"), quote_ident(f"_new_{base}")
    diff, delta = quote_ident(f"_diff_{base}"), quote_ident(f"_changed_{base}")
    removed, added = quote_ident(f"_removed_{base}"), quote_ident(f"_added_{base}")
    con.execute(
        f"create or replace temp table {diff} as select * from ("
        "select * exclude (_side), sum(_side) as _moved from ("
        f"select * exclude ({ROWID}), -1 as _side from {old} "
        f"union all select *, 1 as _side from {new}) "
        "group by all) where _moved <> 0"
    )
    for target, sign in ((removed, "<"), (added, ">")):
        con.execute(
            f"create or replace temp view {target} as select * exclude (_moved, _copy) "
            f"from (select *, unnest(range(cast(abs(_moved) as bigint))) as _copy "
            f"from {diff} where _moved {sign} 0)"
        )
    con.execute(
        f"create or replace temp view {delta} as "
        f"select * from {removed} union all select * from {added}"
    )
    (rows,) = con.execute(f"select sum(abs(_moved)) from {diff}").fetchone() or (0,)
    return [diff], [removed, added, delta], int(rows or 0)


def replace_rows(
    con: duckdb.DuckDBPyConnection, table: str, base: str, match: str, sql: str, *, diff: bool
) -> tuple[list[str], list[str], int | None]:
    """Delete `table`'s rows that pass `match` and insert those of `sql` that pass it. With
    `diff`, keep the rows that differ (`keep_differing`): returns the temp tables and views
    written and how many rows differ; without, None (nobody reads the model: its changed rows
    are not needed)."""
    if not diff:
        con.execute(f"delete from {table} where {match}")
        con.execute(f"insert into {table} by name select * from ({sql}) where {match}")
        return [], [], None
    old, new = quote_ident(f"_old_{base}"), quote_ident(f"_new_{base}")
    # the old rows with their row ids: the delete then goes by row id, rather than matching
    # every row's key columns against the keys again (a third of the cost on 12.9 million unit
    # nights, docs/benchmarks.md session 14)
    con.execute(
        f"create or replace temp table {old} as select rowid as {ROWID}, * "
        f"from {table} where {match}"
    )
    con.execute(f"delete from {table} where rowid in (select {ROWID} from {old})")
    # the table's columns, in its order and types, then the new rows cast into them by name
    con.execute(f"create or replace temp table {new} as select * from {table} limit 0")
    con.execute(f"insert into {new} by name select * from ({sql}) where {match}")
    con.execute(f"insert into {table} select * from {new}")
    tables, views, rows = keep_differing(con, base)
    return [old, new, *tables], views, rows
