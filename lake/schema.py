"""How a lake table is described: column kinds and Arrow types, lineage, keys and parents.

One explicit schema per table (docs/contracts.md section 3) drives normalisation, the Parquet
schema, the Dagster column schema and the current-state rule, so they cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

MONEY = pa.decimal128(18, 2)
TIMESTAMP = pa.timestamp("ms", tz="UTC")

# kind -> Arrow type. "translation" picks the `en` name out of a translations list.
ARROW_TYPES: dict[str, pa.DataType] = {
    "id": pa.int64(),
    "int": pa.int64(),
    "float": pa.float64(),
    "money": MONEY,
    "date": pa.date32(),
    "datetime": TIMESTAMP,
    "str": pa.string(),
    "bool": pa.bool_(),
    "int_list": pa.list_(pa.int64()),
    "str_list": pa.list_(pa.string()),
    "translation": pa.string(),
}

LINEAGE: tuple[pa.Field, ...] = (
    pa.field("_batch_id", pa.string(), nullable=False),
    pa.field("_batch_kind", pa.string(), nullable=False),
    pa.field("_extracted_at", TIMESTAMP, nullable=False),
    pa.field("_source", pa.string(), nullable=False),
    pa.field("_is_deleted", pa.bool_(), nullable=False),
    pa.field("_extra", pa.string()),
)

QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("_batch_id", pa.string()),
        pa.field("_extracted_at", TIMESTAMP),
        pa.field("_source", pa.string()),
        pa.field("table", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("record", pa.string()),
    ]
)

# Reservation status codes the real service documents (real-service-notes 4.2).
RATE_STATUSES = (0, 1)  # inactive, active (docs/contracts.md: status 1 = active)
RATE_QUANTIFIERS = ("OVERRIDE", "ABSOLUTE", "RELATIVE")  # real-service-notes 5
RESERVATION_STATUSES = (-99, -13, -12, -11, -10, -5, 0, 10, 11, 12, 21, 31, 41)
# Bill line types (real-service-notes 4.4).
BILL_LINE_TYPES = (10, 20, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 180, 190, 250, 260)
PAYER_TYPES = ("CUSTOMER", "PAYING_CUSTOMER", "AGENT")

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """`nrOfBedrooms` -> `nr_of_bedrooms`, `visitAddress.city` -> `visit_address_city`."""
    return "_".join(_CAMEL.sub("_", part).lower() for part in name.split("."))


@dataclass(frozen=True)
class Column:
    """One lake column: where it comes from on the wire, its kind and its rules."""

    source: str  # wire field, dotted for a nested object ("visitAddress.city")
    kind: str
    required: bool = False
    codes: tuple[object, ...] | None = None  # allowed values; anything else is quarantined
    pii: bool = False  # lands only when include_customer_pii is set
    name: str = ""  # lake column; snake_case of `source` unless given

    @property
    def column(self) -> str:
        if self.name:
            return self.name
        return "name" if self.kind == "translation" else snake(self.source)

    @property
    def arrow_type(self) -> pa.DataType:
        return ARROW_TYPES[self.kind]


def col(source: str, kind: str = "str", **kw: object) -> Column:
    return Column(source, kind, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Table:
    """A lake table. Child tables name their parent and the columns linking to its key."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    parent: str | None = None
    parent_key: dict[str, str] = field(default_factory=dict)  # child column -> parent key
    ignored: tuple[str, ...] = ()  # wire fields known and deliberately not landed

    def landed(self, include_pii: bool) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if include_pii or not c.pii)

    def arrow_schema(self, include_pii: bool = False) -> pa.Schema:
        fields = [pa.field(c.column, c.arrow_type) for c in self.landed(include_pii)]
        return pa.schema([*fields, *LINEAGE])

    def known_fields(self) -> frozenset[str]:
        """Top-level wire fields this table understands (landed, PII or ignored)."""
        return frozenset(c.source.split(".")[0] for c in self.columns) | frozenset(self.ignored)
