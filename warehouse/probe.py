"""The columns and types of every model without a lake: each model built empty in memory.

Dagster's column schema of the warehouse assets is known before any run from this (about half a
second), and the catalogue checks that every column has a description without building data.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import duckdb

from lake.sql import quote_ident
from warehouse import asof
from warehouse.build import SCHEMAS, write_settings
from warehouse.columns import table_columns
from warehouse.lake import attach_lake
from warehouse.macros import MACROS
from warehouse.models import discover_models

NO_LAKE = Path("/nonexistent-lake")  # a folder with no table: every lake view is typed and empty


@cache
def model_schemas() -> dict[str, tuple[tuple[str, str], ...]]:
    """Qualified model -> its (column, DuckDB type) pairs, in the model's column order."""
    con = duckdb.connect()
    try:
        con.execute("set TimeZone = 'UTC'")
        attach_lake(con, NO_LAKE)
        for macro in MACROS:
            con.execute(macro)
        for schema in SCHEMAS:
            con.execute(f"create schema if not exists {quote_ident(schema)}")
        write_settings(con, "probe", asof.WarehouseAsOf(None, asof.NO_RUN_STATE), None)
        models = discover_models()
        for model in models.values():
            name = f"{quote_ident(model.layer)}.{quote_ident(model.name)}"
            con.execute(f"create table {name} as select * from (\n{model.sql}\n) limit 0")
        columns = table_columns(con)  # one query: each costs the same whatever it asks
        return {q: columns.get(q, ()) for q in models}
    finally:
        con.close()


def model_columns() -> dict[str, list[str]]:
    """Qualified model -> its column names (for `warehouse.catalog`)."""
    return {q: [c for c, _ in cols] for q, cols in model_schemas().items()}
