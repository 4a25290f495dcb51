"""Expose the Parquet lake to the models as two read-only catalogs of views.

`lake.<table>` holds every row ever extracted (typed per `lake_schema`), `lake_current.<table>`
the current state per the contract's rule. Both live in in-memory catalogs attached to the build
connection, so the published warehouse never depends on lake paths.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from lake.sql import current_state_sql, quote_ident, quote_literal
from lake.tables import TABLES as LAKE_TABLES
from warehouse.lake_schema import TABLES

LAKE_CATALOG = "lake"
CURRENT_CATALOG = "lake_current"


def table_files(lake_dir: Path, table: str) -> list[Path]:
    """Committed Parquet files of a table (temp files start with a dot or lack the suffix)."""
    folder = lake_dir / table
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.parquet") if not p.name.startswith("."))


def _present_columns(files: list[Path], wanted: set[str]) -> set[str]:
    """The columns any of the files has, read from their footers until every `wanted` column
    is found (a lake file is written with every column of its table: usually the first)."""
    names: set[str] = set()
    for f in files:
        names.update(pq.read_schema(f).names)
        if wanted <= names:
            break
    return names


def raw_view_sql(table: str, files: list[Path]) -> str:
    """A typed select over the table's files; missing columns become typed nulls."""
    spec = TABLES[table]
    present = _present_columns(files, set(spec.all_columns)) if files else set()
    cols = []
    for name, typ in spec.all_columns.items():
        src = quote_ident(name) if name in present else "null"
        cols.append(f"cast({src} as {typ}) as {quote_ident(name)}")
    select = ",\n    ".join(cols)
    if not files:
        return f"select\n    {select}\nwhere false"
    paths = ", ".join(quote_literal(str(f)) for f in files)
    return f"select\n    {select}\nfrom read_parquet([{paths}], union_by_name = true)"


def current_view_sql(table: str) -> str:
    """The current-state view of one table: the lake's one rule over the `lake` catalog."""
    spec = LAKE_TABLES[table]
    raw = f"{LAKE_CATALOG}.{quote_ident(table)}"
    parent = None if spec.parent is None else f"{CURRENT_CATALOG}.{quote_ident(spec.parent)}"
    return current_state_sql(spec, raw, parent)


def narrowed_current_sql(table: str, column: str | tuple[str, ...], match: str) -> str:
    """The current state of the rows of `table` whose `column` passes `match` (a predicate on
    `column`, or on several columns together), the parent's narrowed the same way when it has
    those columns. The same rows as filtering `lake_current.<table>` when each value of
    `column` has its own current rows (a reservation's children; an availability record's
    accommodation type and arrival date, part of its key), at the cost of those rows rather than
    of the whole table.

    The narrowed rows and the parent's narrowed current state are materialized once: the rule
    names its candidates several times and a child names its parent in its candidates, so
    inlined they read the parent's files some eight times for a child table (docs/benchmarks.md,
    session 13)."""
    columns = (column,) if isinstance(column, str) else column
    spec = LAKE_TABLES[table]
    everything = f"{LAKE_CATALOG}.{quote_ident(table)}"
    rows = quote_ident(f"_narrowed_{table}")
    ctes = [f"{rows} as materialized (select * from {everything} where {match})"]
    parent = None
    if spec.parent is not None:
        if set(columns) <= set(TABLES[spec.parent].all_columns):
            parent = quote_ident(f"_narrowed_current_{spec.parent}")
            narrowed = narrowed_current_sql(spec.parent, column, match)
            ctes.append(f"{parent} as materialized ({narrowed})")
        else:
            parent = f"{CURRENT_CATALOG}.{quote_ident(spec.parent)}"
    latest = None
    if spec.parent is None:  # its last full batch, a fact of the whole table: read once
        latest = quote_ident(f"_last_full_{table}")
        ctes.append(
            f"{latest} as materialized (select max(_batch_id) as _batch_id, "
            f"'full' as _batch_kind from {everything} where _batch_kind = 'full')"
        )
    current = current_state_sql(spec, rows, parent, all_rows=latest)
    return f"with {', '.join(ctes)}\nselect * from ({current})"


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
        con.execute(f"create view {CURRENT_CATALOG}.{name} as {current_view_sql(table)}")
    return counts


def detach_lake(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"detach {CURRENT_CATALOG}")
    con.execute(f"detach {LAKE_CATALOG}")
