"""Write small lake fixtures: typed Parquet per the lake contract, with lineage columns.

Tests describe rows as dicts of service fields (snake_case); the writer fills the lineage
columns, casts money exactly and types every column as docs/contracts.md section 3 says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.lake_schema import LINEAGE, TABLES

_ARROW: dict[str, pa.DataType] = {
    "BIGINT": pa.int64(),
    "VARCHAR": pa.string(),
    "DATE": pa.date32(),
    "TIMESTAMPTZ": pa.timestamp("ms", tz="UTC"),
    "DECIMAL(18,2)": pa.decimal128(18, 2),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "BIGINT[]": pa.list_(pa.int64()),
    "VARCHAR[]": pa.list_(pa.string()),
}
_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


def arrow_schema(table: str) -> pa.Schema:
    cols = TABLES[table].all_columns
    return pa.schema([pa.field(name, _ARROW[typ]) for name, typ in cols.items()])


def _coerce(value: Any, typ: str) -> Any:
    if value is None:
        return None
    if typ == "DECIMAL(18,2)":
        return Decimal(str(value)).quantize(Decimal("0.01"))
    if typ == "DATE" and isinstance(value, str):
        return date.fromisoformat(value)
    if typ == "TIMESTAMPTZ" and isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if typ == "TIMESTAMPTZ" and isinstance(value, date) and not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, 12, tzinfo=UTC)
    return value


@dataclass
class Lake:
    """A lake folder under `data_dir`; each `write` is one batch part of one table."""

    data_dir: Path
    _batches: int = field(default=0)

    @property
    def root(self) -> Path:
        return self.data_dir / "lake"

    def new_batch_id(self) -> str:
        """Sortable batch ids in the contract's shape, one second apart."""
        self._batches += 1
        at = _EPOCH + timedelta(seconds=self._batches)
        return f"{at:%Y%m%dT%H%M%SZ}-{self._batches:08x}"

    def write(
        self,
        table: str,
        rows: Iterable[Mapping[str, Any]],
        *,
        batch_id: str | None = None,
        kind: str = "delta",
        extracted_at: datetime | None = None,
        part: int = 0,
    ) -> str:
        """Write rows as `<batch_id>-<part>.parquet`; a row's `_is_deleted` makes a tombstone."""
        batch_id = batch_id or self.new_batch_id()
        extracted_at = extracted_at or datetime.strptime(batch_id[:16], "%Y%m%dT%H%M%SZ").replace(
            tzinfo=UTC
        )
        spec = TABLES[table]
        cols: dict[str, list[Any]] = {c: [] for c in spec.all_columns}
        for row in rows:
            unknown = set(row) - set(spec.all_columns)
            if unknown:
                raise KeyError(f"{table}: unknown columns {sorted(unknown)}")
            lineage = {
                "_batch_id": batch_id,
                "_batch_kind": kind,
                "_extracted_at": extracted_at,
                "_source": f"/fixture/{table}",
                "_is_deleted": False,
                "_extra": None,
            }
            for col, typ in spec.all_columns.items():
                value = row[col] if col in row else lineage.get(col) if col in LINEAGE else None
                cols[col].append(_coerce(value, typ))
        folder = self.root / table
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{batch_id}-{part:05d}.parquet.tmp"
        pq.write_table(pa.table(cols, schema=arrow_schema(table)), tmp)
        tmp.rename(folder / f"{batch_id}-{part:05d}.parquet")
        return batch_id
