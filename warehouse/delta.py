"""The rows a delete+insert by key really changed (`warehouse.maintain`): of the rows of the
affected keys before it and after it, only those that differ.

An hour's stays reach a third of the nights, but leave most unit nights of those nights as they
were: handing every row of the affected keys to the readers (old and new) made them search
millions of rows for the few that moved. The old rows the new ones do not have are the removed
rows, the new rows the old ones did not have the added rows (duplicates count, nulls compare
equal, as `except all` both ways); a key whose rows came back the same adds nothing. One
aggregate over both sides counting -1 / +1 per row: `except all` numbers every row with a
window first, about five times the CPU at millions of rows (docs/benchmarks.md, session 12).

`replace_rows` is the delete+insert itself. For a model whose changed rows a reader takes (the
others are deleted and inserted by key, nothing copied: the copy is the costly part, it reads
every column of the whole table where the delete reads the key columns), the affected keys' old
rows are copied out with their row ids, the new rows computed once into a temp table, and the
table then writes only the rows that differ: the removed rows deleted by row id, the added rows
inserted. A key whose rows came back the same is not rewritten at all: an hour's availability
rewrote ~170,000 unchanged rows, which the checkpoint at the commit then folded (its vacuum
merges the row groups the deletes thinned out: ~0.5 CPU s of the commit's ~1.0, docs/benchmarks.md
session 14). The table holds the same rows as after a delete and insert of every affected row.
"""

from __future__ import annotations

import duckdb

from lake.sql import quote_ident

# the column of `_old_<base>` holding each old row's row id (no model column starts with `_`)
ROWID = "_old_rowid"


def _copies(diff: str, where: str) -> str:
    """The differing rows of `diff` that pass `where`, each as often as it moved."""
    return (
        "select * exclude (_moved, _rowids, _copy) from (select *, "
        f"unnest(range(cast(abs(_moved) as bigint))) as _copy from {diff}{where})"
    )


def _new_rows(con: duckdb.DuckDBPyConnection, table: str, new: str, sql: str, match: str) -> None:
    """The temp table `new`: `table`'s columns, in its order and types, holding the rows of
    `sql` that pass `match`, cast into them by name."""
    con.execute(f"create or replace temp table {new} as select * from {table} limit 0")
    con.execute(f"insert into {new} by name select * from ({sql}) where {match}")


def keep_differing(
    con: duckdb.DuckDBPyConnection, base: str, *, parts: bool = True
) -> tuple[list[str], list[str], int]:
    """From the temp tables `_old_<base>` (a key's rows before, with their row ids) and
    `_new_<base>` (after), write the table `_diff_<base>` of the rows that differ (each with
    how many copies it gained or lost, and the row ids of its old copies) and the view
    `_changed_<base>` (the removed and the added rows) over it when any differ; with `parts`
    (a model of sums reads the model), the views `_removed_<base>` and `_added_<base>` too.
    Returns the temp tables and the views it wrote, and how many distinct rows differ. Views
    rather than tables: the differing rows are few and read once or twice, where each temp
    table costs a statement's fixed cost (~3-6 ms of CPU: three per model by key); and no
    view nobody reads (a statement each: ~1 ms)."""
    old, new = quote_ident(f"_old_{base}"), quote_ident(f"_new_{base}")
    diff, delta = quote_ident(f"_diff_{base}"), quote_ident(f"_changed_{base}")
    removed, added = quote_ident(f"_removed_{base}"), quote_ident(f"_added_{base}")
    (rows,) = con.execute(
        f"create or replace temp table {diff} as select * from ("
        f"select * exclude (_side, {ROWID}), sum(_side) as _moved, "
        f"list({ROWID}) filter (where _side < 0) as _rowids from ("
        f"select * exclude ({ROWID}), {ROWID}, -1 as _side from {old} "
        f"union all select *, null::bigint, 1 as _side from {new}) "
        "group by all) where _moved <> 0"
    ).fetchone() or (0,)
    if not rows:  # nothing differs: no reader asks for the views
        return [diff], [], 0
    views = [delta]
    con.execute(f"create or replace temp view {delta} as {_copies(diff, '')}")
    if parts:
        for target, sign in ((removed, "<"), (added, ">")):
            where = f" where _moved {sign} 0"
            con.execute(f"create or replace temp view {target} as {_copies(diff, where)}")
        views += [removed, added]
    return [diff], views, int(rows)


def replace_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    base: str,
    match: str,
    sql: str,
    *,
    diff: bool,
    parts: bool = True,
) -> tuple[list[str], list[str], int | None]:
    """Replace `table`'s rows that pass `match` with those of `sql` that pass it. With `diff`,
    keep the rows that differ (`keep_differing`) and write only those: returns the temp
    tables and views written and how many rows differ; without, delete and insert every
    affected row, and None (nobody takes the model's changed rows). `parts`: keep the removed
    and the added rows as views of their own (`keep_differing`)."""
    if not diff:
        con.execute(f"delete from {table} where {match}")
        con.execute(f"insert into {table} by name select * from ({sql}) where {match}")
        return [], [], None
    old, new = quote_ident(f"_old_{base}"), quote_ident(f"_new_{base}")
    con.execute(
        f"create or replace temp table {old} as select rowid as {ROWID}, * "
        f"from {table} where {match}"
    )
    _new_rows(con, table, new, sql, match)
    tables, views, rows = keep_differing(con, base, parts=parts)
    if rows:
        # of a row that lost copies, as many of its old copies' row ids (the same values)
        gone = quote_ident(f"_diff_{base}")
        con.execute(
            f"delete from {table} where rowid in "
            f"(select unnest(_rowids[1:-_moved]) from {gone} where _moved < 0)"
        )
        con.execute(f"insert into {table} {_copies(gone, ' where _moved > 0')}")
    return [old, new, *tables], views, rows


def replace_keys(
    con: duckdb.DuckDBPyConnection, table: str, base: str, match: str, sql: str, keys: str
) -> tuple[list[str], list[str]]:
    """Replace `table`'s rows that pass `match` with those of `sql` that pass it, for a model
    whose every affected key's rows change (`-- incremental changes every affected key`): no
    copy of the old rows (for the bill lines, stored as built, the copy decoded every column of
    the vectors the keys are in), the old rows deleted by key. The new rows are the temp table
    `_new_<base>` (the readers of a shared table take them, `warehouse.shared_current`); the
    view `_changed_<base>` is `keys` (a query of the affected keys named as the key columns):
    what the readers, which take the model by its key alone, are handed. Returns the temp
    tables and views written."""
    new, delta = quote_ident(f"_new_{base}"), quote_ident(f"_changed_{base}")
    _new_rows(con, table, new, sql, match)  # before the delete: a model's SQL may read its table
    con.execute(f"delete from {table} where {match}")
    con.execute(f"insert into {table} select * from {new}")
    con.execute(f"create or replace temp view {delta} as {keys}")
    return [new], [delta]
