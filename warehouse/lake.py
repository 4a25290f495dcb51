"""Expose the Parquet lake to the models as two read-only catalogs of views.

`lake.<table>` holds every row ever extracted (typed per `lake_schema`), `lake_current.<table>`
the current state per the contract's rule. Both live in in-memory catalogs attached to the build
connection, so the published warehouse never depends on lake paths.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from warehouse.lake_schema import TABLES, TableSpec
from warehouse.sqltext import quote_ident, quote_literal

LAKE_CATALOG = "lake"
CURRENT_CATALOG = "lake_current"


def table_files(lake_dir: Path, table: str) -> list[Path]:
    """Committed Parquet files of a table (temp files start with a dot or lack the suffix)."""
    folder = lake_dir / table
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))


def _present_columns(files: list[Path]) -> set[str]:
    names: set[str] = set()
    for f in files:
        names.update(pq.read_schema(f).names)
    return names


def raw_view_sql(table: str, files: list[Path]) -> str:
    """A typed select over the table's files; missing columns become typed nulls."""
    spec = TABLES[table]
    present = _present_columns(files) if files else set()
    cols = []
    for name, typ in spec.all_columns.items():
        src = quote_ident(name) if name in present else "null"
        cols.append(f"cast({src} as {typ}) as {quote_ident(name)}")
    select = ",\n    ".join(cols)
    if not files:
        return f"select\n    {select}\nwhere false"
    paths = ", ".join(quote_literal(str(f)) for f in files)
    return f"select\n    {select}\nfrom read_parquet([{paths}], union_by_name = true)"


def _latest_per_key(candidates: str, key: list[str], order: str) -> str:
    """The latest candidate row per key: rows whose key occurs once are taken as they are, and
    only the keys that occur more than once are ranked (a window over every row of a 13M-row
    child table cost about as much as writing it; duplicates are the few rows re-extracted)."""
    cols = ", ".join(quote_ident(k) for k in key)
    on = " and ".join(f"c.{quote_ident(k)} = d.{quote_ident(k)}" for k in key)
    partition = ", ".join(f"c.{quote_ident(k)}" for k in key)
    return f"""
with candidates as not materialized (
{candidates}
),
duplicated as (
    select {cols} from candidates group by all having count(*) > 1
)
select c.* from candidates as c
anti join duplicated as d on {on}
where not coalesce(c._is_deleted, false)
union all by name
select * exclude (_row_rank) from (
    select c.*, row_number() over (partition by {partition} order by {order}) as _row_rank
    from candidates as c
    semi join duplicated as d on {on}
)
where _row_rank = 1
    and not coalesce(_is_deleted, false)
"""


def current_view_sql(table: str, spec: TableSpec) -> str:
    """The contract's current-state rule (docs/contracts.md section 3) for one table.

    Top-level tables: the latest row per key (by batch, then extraction time) among batches from
    the last full batch on, unless it is a tombstone. A key whose latest row is older than the
    last full batch is excluded, which is the same as leaving older batches out before ranking.
    Child tables: the rows of the batch their current parent row came from, latest per key.
    """
    raw = f"{LAKE_CATALOG}.{quote_ident(table)}"
    if spec.parent is None:
        candidates = f"""    select t.* from {raw} as t
    where t._batch_id >= coalesce(
        (select max(_batch_id) from {raw} where _batch_kind = 'full'), ''
    )"""
        order = "c._batch_id desc, c._extracted_at desc nulls last"
        return _latest_per_key(candidates, list(spec.key), order)
    parent = f"{CURRENT_CATALOG}.{quote_ident(spec.parent)}"
    join = " and ".join(
        f"t.{quote_ident(c)} = p.{quote_ident(pk)}" for c, pk in spec.parent_key.items()
    )
    candidates = f"""    select t.* from {raw} as t
    semi join {parent} as p
        on {join} and t._batch_id = p._batch_id"""
    return _latest_per_key(candidates, list(spec.key), "c._extracted_at desc nulls last")


def _ordered_tables() -> list[str]:
    """Parents before children, so current child views can reference current parents."""
    return sorted(TABLES, key=lambda t: (TABLES[t].parent is not None, t))


def attach_lake(con: duckdb.DuckDBPyConnection, lake_dir: Path) -> dict[str, int]:
    """Create the `lake` and `lake_current` catalogs; return the file count per table."""
    con.execute(f"attach ':memory:' as {LAKE_CATALOG}")
    con.execute(f"attach ':memory:' as {CURRENT_CATALOG}")
    counts: dict[str, int] = {}
    for table in _ordered_tables():
        files = table_files(lake_dir, table)
        counts[table] = len(files)
        name = quote_ident(table)
        con.execute(f"create view {LAKE_CATALOG}.{name} as {raw_view_sql(table, files)}")
        con.execute(
            f"create view {CURRENT_CATALOG}.{name} as {current_view_sql(table, TABLES[table])}"
        )
    return counts


def detach_lake(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"detach {CURRENT_CATALOG}")
    con.execute(f"detach {LAKE_CATALOG}")
