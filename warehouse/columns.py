"""The columns of a DuckDB file's tables, every table in one query.

Why one query: a query of `information_schema.columns` (or `duckdb_columns()`) costs about the
same whatever it filters (~6 ms on a small warehouse, with the lake's views attached), so asking
per model was most of a small build's bookkeeping (docs/benchmarks.md, "Session 11: a small
run's fixed cost").
"""

from __future__ import annotations

import duckdb


def table_columns(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[tuple[str, str], ...]]:
    """`schema.table` -> its (column, DuckDB type) pairs in order, for every table and view of
    the connection's current database."""
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
        "select table_schema || '.' || table_name, column_name, data_type "
        "from information_schema.columns where table_catalog = current_database() "
        "order by table_schema, table_name, ordinal_position"
    ).fetchall():
        found.setdefault(table, []).append((column, kind))
    return {t: tuple(cols) for t, cols in found.items()}
