"""The lake tables the warehouse reads: columns and DuckDB types, keys, parent tables.

Derived from the one definition of the lake in `lake/tables.py` (docs/contracts.md section 3),
so the writer and the reader cannot drift apart. The builder uses it to cast what it reads, to
build correctly-typed empty relations for missing tables, and to derive the current-state rule
(latest row per key, tombstones, full batches, child replacement). Personal-data columns are left
out: they never reach the warehouse, even when a setting lands them in the lake.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from lake.tables import TABLES as LAKE_TABLES

BIGINT = "BIGINT"
TEXT = "VARCHAR"
DATE = "DATE"
TS = "TIMESTAMPTZ"
NUM = "DOUBLE"
BOOL = "BOOLEAN"

LINEAGE: dict[str, str] = {
    "_batch_id": TEXT,
    "_batch_kind": TEXT,
    "_extracted_at": TS,
    "_source": TEXT,
    "_is_deleted": BOOL,
    "_extra": TEXT,
}


@dataclass(frozen=True)
class TableSpec:
    """A lake table: its service columns, primary key and (for child tables) its parent."""

    columns: dict[str, str]
    key: tuple[str, ...]
    parent: str | None = None
    # child column -> parent key column
    parent_key: dict[str, str] = field(default_factory=dict)

    @property
    def all_columns(self) -> dict[str, str]:
        return {**self.columns, **LINEAGE}


def duckdb_type(arrow_type: pa.DataType) -> str:
    """The DuckDB type of a lake column's Arrow type."""
    if pa.types.is_list(arrow_type):
        return f"{duckdb_type(arrow_type.value_type)}[]"
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision},{arrow_type.scale})"
    if pa.types.is_timestamp(arrow_type):
        return TS
    for check, name in (
        (pa.types.is_int64, BIGINT),
        (pa.types.is_string, TEXT),
        (pa.types.is_date32, DATE),
        (pa.types.is_float64, NUM),
        (pa.types.is_boolean, BOOL),
    ):
        if check(arrow_type):
            return name
    raise TypeError(f"no DuckDB type for lake type {arrow_type}")


TABLES: dict[str, TableSpec] = {
    name: TableSpec(
        {c.column: duckdb_type(c.arrow_type) for c in table.landed(include_pii=False)},
        table.key,
        table.parent,
        dict(table.parent_key),
    )
    for name, table in LAKE_TABLES.items()
}
