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

# Coded values with the names the real service documents: they decide what is quarantined and
# they are listed in the column descriptions (`lake.column_docs`).
RATE_STATUS_NAMES: dict[object, str] = {0: "inactive", 1: "active"}  # docs/contracts.md
RATE_QUANTIFIER_NAMES: dict[object, str] = {  # real-service-notes 5
    "OVERRIDE": "replaces the price",
    "ABSOLUTE": "adds an amount",
    "RELATIVE": "adds a percent",
}
RESERVATION_STATUS_NAMES: dict[object, str] = {  # real-service-notes 4.2
    -99: "DELETED",
    -13: "DEFINITIVE_CANCELLED",
    -12: "CANCELLED",
    -11: "EXPIRED",
    -10: "DECLINED",
    -5: "QUOTATION",
    0: "INITIAL",
    10: "REQUEST",
    11: "OPTIONAL",
    12: "PROVISIONAL",
    21: "DEFINITIVE",
    31: "CHECKED_IN",
    41: "CHECKED_OUT",
}
BILL_LINE_TYPE_NAMES: dict[object, str] = {  # real-service-notes 4.4
    10: "RESERVED_RESOURCE",
    20: "RESORT_ARTICLE",
    40: "SUBTOTAL",
    50: "WARRANT",
    60: "VAT",
    70: "TOTAL",
    80: "PAID_AMOUNT",
    90: "DUE_AMOUNT",
    100: "COMMISSION",
    110: "COMMISSION_VAT",
    120: "TO_PAY",
    130: "STAY_ARTICLE",
    140: "WITHHOLDINGARTICLE",
    180: "COST_TYPE",
    190: "CANCEL_COMPENSATION",
    250: "TAX",
    260: "TOTAL_EXCL_TAX",
}
PAYER_TYPE_NAMES: dict[object, str] = {  # real-service-notes 4.4: the bill it is on
    "CUSTOMER": "the guest's bill",
    "PAYING_CUSTOMER": "the bill of the customer who pays",
    "AGENT": "the agent's (reseller's) bill",
}
RATE_STATUSES = tuple(RATE_STATUS_NAMES)
RATE_QUANTIFIERS = tuple(RATE_QUANTIFIER_NAMES)
RESERVATION_STATUSES = tuple(RESERVATION_STATUS_NAMES)
BILL_LINE_TYPES = tuple(BILL_LINE_TYPE_NAMES)
PAYER_TYPES = tuple(PAYER_TYPE_NAMES)
CODE_NAMES: dict[tuple[object, ...], dict[object, str]] = {
    tuple(names): names
    for names in (
        RATE_STATUS_NAMES,
        RATE_QUANTIFIER_NAMES,
        RESERVATION_STATUS_NAMES,
        BILL_LINE_TYPE_NAMES,
        PAYER_TYPE_NAMES,
    )
}

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


def id_col(source: str, **kw: object) -> Column:
    """An id column (`kind="id"`): the key of a record or a link to another."""
    return col(source, "id", **kw)


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


def table(name: str, key: tuple[str, ...], *columns: Column, **kw: object) -> Table:
    """A `Table` written as its name, key and columns, then its other fields."""
    return Table(name, tuple(columns), key, **kw)  # type: ignore[arg-type]
