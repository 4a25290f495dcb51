"""A model rebuilt whole inside the refresh's transaction, and what changed for its readers.

`warehouse.maintain` rebuilds a model whole when it cannot be maintained by key (a missing
model, changed SQL, an input that changed whole). Its readers then need to know what changed:
- `rebuild` compares a fingerprint (columns, row count, sum of row hashes) before and after:
  the same fingerprint and the model is unchanged for its readers (a calendar that did not move,
  a dimension nobody touched);
- `rebuild_diffed`, for a model some reader maps to its own key, keeps the old table aside
  until it has the rows only one of the two versions has, so that a supply list or a dimension that
  changed in a few rows changes its readers in those keys only.
"""

from __future__ import annotations

import duckdb

from lake.sql import quote_ident
from warehouse.models import Model

# the lake's lineage columns: a list re-read whole lands every row in a new batch
LINEAGE = ("batch_id", "batch_kind", "extracted_at")


def columns_of(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    return [row[0] for row in con.execute(f"describe select * from {name}").fetchall()]


def fingerprint(con: duckdb.DuckDBPyConnection, table: str) -> tuple[object, ...]:
    # `describe` of the one table: a query of information_schema reads every table's
    # columns, and the lake's views' (~10 ms each)
    cols = [f"{name} {kind}" for name, kind, *_ in con.execute(f"describe {table}").fetchall()]
    row = con.execute(f"select count(*), sum(hash(t)) from {table} as t").fetchone()
    return (cols, row)


def rebuild(con: duckdb.DuckDBPyConnection, model: Model, *, compare: bool) -> bool:
    """Rebuild whole; False when `compare` and the fingerprint is the same as before."""
    table = model.relation
    before = fingerprint(con, table) if compare else None
    con.execute(f"create or replace table {table} as\n{model.table_sql}")
    return before is None or fingerprint(con, table) != before


def rebuild_diffed(
    con: duckdb.DuckDBPyConnection, model: Model, before: str, delta: str, *, blind: bool
) -> bool | None:
    """Rebuild whole, the old table renamed aside to `before` (in its schema) for the diff and
    dropped after it; the changed rows (as `except all` both ways: duplicates count, nulls
    compare equal; the lineage columns left out when `blind`, as no reader maps a batch id to its
    key) go to the temp table `delta`. None: the schema changed (the model changed whole); else
    whether any row differs. Renamed, not copied: a copy read and wrote every row of the old
    table (0.021 CPU s of the 38,000 operations tasks' 0.10 across midnight at large,
    docs/benchmarks.md, session 21), where a rename is a change of the catalog in the same
    transaction (a crash before the commit leaves the table as it was)."""
    table = model.relation
    aside = f"{quote_ident(model.layer)}.{before}"
    con.execute(f"alter table {table} rename to {before}")
    columns = columns_of(con, aside)
    con.execute(f"create table {table} as\n{model.table_sql}")
    changed = None
    if columns_of(con, table) == columns:
        lineage = [c for c in columns if c in LINEAGE and blind]
        rows = f"select * exclude ({', '.join(lineage)})" if lineage else "select *"
        # one aggregate over both versions counting +1 / -1 per row, each row that does not
        # cancel out repeated as often as it is over (`except all` numbers every row with a
        # window: 0.14 against 0.03 CPU s for the 38,000 operations tasks at large, session 16)
        con.execute(
            f"create or replace temp table {delta} as select * exclude (_diff_n, _diff_i) from ("
            "select *, unnest(range(abs(_diff_n))) as _diff_i from ("
            "select * exclude (_diff_side), cast(sum(_diff_side) as bigint) as _diff_n from ("
            f"{rows}, 1 as _diff_side from {aside} union all {rows}, -1 as _diff_side from {table}"
            ") group by all having sum(_diff_side) <> 0))"
        )
        (count,) = con.execute(f"select count(*) from {delta}").fetchone() or (0,)
        changed = count > 0
    con.execute(f"drop table {aside}")  # dropped in the transaction: never in the file
    return changed
