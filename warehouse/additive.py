"""Maintain a model of sums by adding what changed: new = old - sums(old rows) + sums(new rows).

A model whose header says `-- incremental sums over <input> by <key>, ...` (`warehouse.headers`)
has as its rows the key columns and, in every other column, a sum (or count) over the input's
rows, each row counted on its own. When the input changed by key (`warehouse.maintain` keeps
the rows a delete+insert removed apart from those it inserted), the model's own SQL run over
the removed rows and over the inserted ones gives, per key, what to subtract and what to add:
in proportion to the changed rows, however many keys they reach (a reservation's nights reach
every snapshot that counts them). Keys whose sums all become 0 are removed: a whole build has
no such row. Money stays exact (the sums are DECIMAL); a sum's type is the table's. A sum that
comes out null over the old or the new rows (a group whose values are all null, in a model that
does not coalesce them) is no difference to add (`x + null` is null): the model is then left as
it is and the caller rebuilds it whole.

The changed rows it reports for its readers are, as for a delete+insert, the old and the new
versions of the rows it touched, kept apart too.

A model of sums over snapshots that move with the as-of date (`-- incremental shifts`,
`warehouse.headers`) is moved rather than rebuilt when the date moves (`shift_sums`): its
stored column moves by the days moved, then its header's query adds, per key, what the move
changes (booking pace's cells: only the groups with a bound between a snapshot's two dates);
that query sums by the key, one row per key, and is added as it comes.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from lake.sql import quote_ident
from warehouse.models import Model


@dataclass
class Added:
    """What adding did: the temp tables of the rows it replaced and of their new versions,
    the two together (None when no sum moved), and the keys it touched."""

    removed: str
    added: str
    changed: str | None
    keys: int


def _same(keys: list[str], a: str, b: str) -> str:
    return " and ".join(f"{a}.{k} is not distinct from {b}.{k}" for k in keys)


def add_sums(
    con: duckdb.DuckDBPyConnection,
    model: Model,
    old_sql: str | None,
    new_sql: str,
    *,
    rows: bool = True,
) -> Added | None:
    """Apply the model's SQL over its input's old rows (`old_sql`) and new rows (`new_sql`) to
    its table as a difference, in the caller's transaction. None, with the table untouched,
    when a sum over either side is null: the caller rebuilds the model whole. Without `rows`
    it keeps no view of the rows it touched (its readers see it changed whole). Without
    `old_sql`, `new_sql` is the difference itself, one row per key (a date's move: its query
    sums by the key already, so its rows are not summed again: ~0.02 CPU s a day at large).

    With `rows` the table is read twice: the touched keys' rows copied out (their sums before),
    and the delete of those keys; their new rows are computed from the copy and the difference,
    and are the rows it reports as added (session 22: it read the table four times, the copy,
    the new sums' join and anti join, the delete, and the added rows again after the insert).
    Without, it keeps no copy: the new sums' join and anti join read the table, then the
    delete."""
    assert model.sums is not None
    table = model.relation
    base = f"{model.layer}_{model.name}"
    delta, removed, added = (quote_ident(f"_{p}_{base}") for p in ("sums", "removed", "added"))
    changed = quote_ident(f"_changed_{base}")
    described = [(str(r[0]), str(r[1])) for r in con.execute(f"describe {table}").fetchall()]
    columns = [c for c, _ in described]
    keys = [quote_ident(k) for k in model.sums.keys]
    missing = set(model.sums.keys) - set(columns)
    if missing:
        raise ValueError(
            f"{model.qualified}: `incremental sums` keys {sorted(missing)} are no columns"
        )
    measures = [quote_ident(c) for c in columns if c not in model.sums.keys]
    listed = ", ".join(keys)
    plus = ", ".join(measures)
    minus = ", ".join(f"-{m} as {m}" for m in measures)
    summed = ", ".join(f"sum({m}) as {m}" for m in measures)
    moved = " or ".join(f"sum({m}) <> 0" for m in measures)
    null = "bool_or(" + " or ".join(f"{m} is null" for m in measures) + ")"
    if old_sql is None:
        each = "(" + " or ".join(f"{m} is null" for m in measures) + ")"
        differs = " or ".join(f"{m} <> 0" for m in measures)
        con.execute(
            f"create or replace temp table {delta} as select {listed}, {plus}, {each} as _null "
            f"from ({new_sql}) where {each} or {differs}"
        )
    else:
        con.execute(
            f"create or replace temp table {delta} as select {listed}, {summed}, {null} as _null "
            f"from (select {listed}, {plus} from ({new_sql}) "
            f"union all select {listed}, {minus} from ({old_sql})) "
            f"group by all having {null} or {moved}"
        )
    (count, nulls) = con.execute(
        f"select count(*), count(*) filter (where _null) from {delta}"
    ).fetchone() or (0, 0)
    if nulls:
        return None
    if not count:  # no sum moved: the table is untouched, its readers see it unchanged
        return Added(removed="", added="", changed=None, keys=0)
    touched = f"exists (select 1 from {delta} as d where {_same(keys, 'd', 't')})"
    # the touched keys' rows as stored (the first read of the table), when its readers are
    # told them; else the new rows read the table itself (a date's shift touches many keys, and
    # a copy of them would be one more read: session 22)
    stored = removed if rows else table
    if rows:
        con.execute(
            f"create or replace temp table {removed} as select * from {table} as t where {touched}"
        )
    # their new rows, in the table's columns and types: the stored sums plus the difference,
    # a new key (no stored row: `_stored` null) its difference alone; a key whose sums all come
    # to 0 is no row (a null sum is none of them). One left join from the difference (a join
    # and an anti join before: ~0.013 CPU s less for a day's move at large)
    key_names = set(model.sums.keys)
    both = ", ".join(
        f"d.{q}"
        if c in key_names
        else f"case when t._stored then t.{q} + d.{q} else d.{q} end as {q}"
        for c, q in ((c, quote_ident(c)) for c in columns)
    )
    cast = ", ".join(
        f"cast({quote_ident(c)} as {kind}) as {quote_ident(c)}" for c, kind in described
    )
    zero = " and ".join(f"{m} = 0" for m in measures)
    con.execute(
        f"create or replace temp table {added} as select {cast} from ("
        f"select {both} from {delta} as d "
        f"left join (select *, true as _stored from {stored}) as t on {_same(keys, 'd', 't')}) "
        f"where not coalesce({zero}, false)"
    )
    # the touched keys' rows deleted and inserted anew, not updated: an update makes the
    # checkpoint rewrite each touched row group's columns whole, a delete+insert writes only
    # the new rows (docs/benchmarks.md, session 20); the temp tables are left to the
    # connection's close, as the walk's others are
    con.execute(f"delete from {table} as t where {touched}")  # the second read
    con.execute(f"insert into {table} select * from {added}")
    if not rows:
        return Added(removed="", added="", changed=None, keys=int(count))
    con.execute(
        f"create or replace temp table {changed} as "
        f"select * from {removed} union all select * from {added}"
    )
    return Added(
        removed=f"_removed_{base}",
        added=f"_added_{base}",
        changed=f"_changed_{base}",
        keys=int(count),
    )


# the settings the stored rows were built with (`warehouse.asof.keep_previous`), in the shape
# of `meta.build_settings`: a model's SQL run at the date it moved from
OLD_SETTINGS = (
    "(select s.* replace (b.as_of as as_of, b.range_start as range_start, "
    "b.range_end as range_end) from meta.build_settings as s cross join build_settings_before as b)"
)


def shift_sums(con: duckdb.DuckDBPyConnection, model: Model, days: int) -> Added | None:
    """Move a model of sums over snapshots with the as-of date (`-- incremental shifts`): its
    stored rows' column moves `days` days, then the header's query adds, per key, the difference
    of each sum between the moved rows and the new date's. None, the table left to a whole
    rebuild, when a difference is null."""
    assert model.sums is not None and model.sums.shifts and model.sums.moved
    table = model.relation
    if days:
        column = quote_ident(model.sums.shifts)
        con.execute(f"update {table} set {column} = {column} + cast($1 as integer)", [days])
    query = model.sums.moved
    return add_sums(con, model, None, query, rows=False)
