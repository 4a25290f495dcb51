"""The normaliser's column work: reading wire fields into columns (uniform pages at once, nested
objects, malformed values kept as evidence), converting them to the lake's types and collecting
each row's reasons to be quarantined. `assets.normalise.Normaliser` puts it together per table."""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from assets.convert import CONVERTERS, from_wire
from lake.schema import Column, Table

Record = dict[str, Any]
Columns = dict[str, list[Any]]
PERSONAL_TABLES = frozenset(
    {"customers", "reservations", "reserved_resources", "bill_lines", "reservation_subjects"}
)
_RAW_LIMIT = 60


@dataclass
class Normalised:
    """The result of one page: typed tables, quarantine rows and drift counters.

    `tables` hold the records that are good throughout. A quarantined record whose root row is
    good and only some child rows are bad leaves its good rows in `partial` (per table), and
    the key and parent link of each bad child row in `lost` (per child table, null where
    unreadable); a bad record of a stream whose root is itself a child table leaves its key and
    parent link in `lost` too. The landing decides with the lake whether those records can land
    with the last good version of what is bad (`assets.lastgood`).
    """

    tables: dict[str, pa.Table]
    quarantine: pa.Table
    records: int
    quarantined: int
    unknown_fields: Counter[str] = field(default_factory=Counter)
    dropped_pii_fields: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    partial: dict[str, pa.Table] = field(default_factory=dict)
    lost: dict[str, pa.Table] = field(default_factory=dict)


class _Bad:
    """Stands in for a value under a malformed object; no converter accepts it."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def __repr__(self) -> str:
        return repr(self.raw)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _RAW_LIMIT else text[: _RAW_LIMIT - 3] + "..."


def sub_values(objs: Sequence[Any], tail: str) -> list[Any]:
    """`head.tail` values: None under a missing object, a bad value under a non-object."""
    if all(o is None or type(o) is dict for o in objs):
        return [None if o is None else o.get(tail) for o in objs]
    return [None if o is None else o.get(tail) if isinstance(o, dict) else _Bad(o) for o in objs]


def read_uniform(rows: Sequence[Any], known: frozenset[str]) -> Columns | None:
    """Every field's values when all rows are dicts with exactly the first row's keys, all known.

    None otherwise (a row with another key set, a non-object row or an unknown field): the caller
    then reads the page row by row.
    """
    first = rows[0]
    if type(first) is not dict:
        return None
    keys = tuple(first)
    if not known.issuperset(keys):
        return None
    try:
        cols = {k: list(map(itemgetter(k), rows)) for k in keys}
        # Each row holds all of the first row's keys; the same count means no other key either.
        if len(set(map(len, rows))) != 1:
            return None
    except (KeyError, TypeError):  # a row lacks a key, or is not an object (after `{}`: null)
        return None
    return cols


@dataclass(frozen=True)
class Read:
    """One table's rows of a page as read: Python values by wire source (`raw`), the columns
    the page read already made typed Arrow arrays (`wire`, by source), and the rows as dicts
    when they were read from dicts (for `_extra`; None from the typed read, which refuses
    unknown fields)."""

    n: int
    raw: Callable[[str], Sequence[Any]]
    wire: dict[str, pa.Array]
    rows: Sequence[Any] | None


@dataclass(frozen=True)
class Plan:
    """What normalising one table needs, worked out once per normaliser."""

    table: Table
    columns: tuple[Column, ...]  # landed
    names: tuple[str, ...]  # lake column of each landed column
    fields: tuple[str, ...]  # top-level wire fields read from a page
    known: frozenset[str]
    sub_known: dict[str, frozenset[str]]  # nested object -> its known fields
    nested: tuple[str, ...]  # landed dotted sources
    personal: bool

    @classmethod
    def of(cls, table: Table, include_pii: bool, extra_fields: Sequence[str] = ()) -> Plan:
        columns = table.landed(include_pii)
        heads = dict.fromkeys(c.source.split(".")[0] for c in table.columns if "." in c.source)
        sub_known = {
            head: frozenset(
                c.source.split(".", 1)[1] for c in table.columns if c.source.startswith(head + ".")
            )
            for head in heads
        }
        fields = dict.fromkeys(c.source.split(".")[0] for c in columns)
        fields.update(dict.fromkeys(extra_fields))
        return cls(
            table,
            columns,
            tuple(c.column for c in columns),
            tuple(fields),
            table.known_fields(),
            sub_known,
            tuple(c.source for c in columns if "." in c.source),
            table.name in PERSONAL_TABLES,
        )


@functools.lru_cache(maxsize=256)
def _lookup(codes: tuple[object, ...], type_: pa.DataType) -> pc.SetLookupOptions:
    """A code column's allowed values, made once (each page would build its hash set anew)."""
    return pc.SetLookupOptions(value_set=pa.array(codes, type=type_), skip_nulls=True)


class Converted:
    """Typed columns of one table plus, per row, the reasons it is bad.

    `wire` holds columns already made typed Arrow arrays by the typed read (`assets.typed`); any other
    column, and the raw values quoted in reasons, come from `raw(source)` (Python values).
    """

    def __init__(
        self,
        plan: Plan,
        n: int,
        raw: Callable[[str], list[Any]],
        preset: dict[str, pa.Array],
        wire: dict[str, pa.Array] | None = None,
    ) -> None:
        self.arrays: dict[str, pa.Array] = {}
        self.bad = np.zeros(n, dtype=bool)
        self.reasons: dict[int, list[str]] = defaultdict(list)
        self._table, self._raw = plan.table, raw
        for c, name in zip(plan.columns, plan.names, strict=True):
            if name in preset:
                self.arrays[name] = preset[name]
                continue
            converted = None
            if wire is not None and c.source in wire:
                converted = from_wire(c.kind, wire[c.source])
            if converted is None:
                converted = CONVERTERS[c.kind](raw(c.source))
            arr, bad, label = converted
            self._mark(name, c.source, bad, label)
            if c.codes is not None:
                # nulls never match: every value present is known when the counts agree
                known = pc.call_function("is_in", [arr], _lookup(c.codes, arr.type))
                if known.true_count != len(arr) - arr.null_count:
                    unknown = pc.and_(pc.is_valid(arr), pc.invert(known))
                    bad_code = unknown.to_numpy(zero_copy_only=False)
                    self._mark(name, c.source, bad_code, "unknown code")
            if c.required and arr.null_count:
                missing = arr.is_null().to_numpy(zero_copy_only=False)
                if bad is not None:
                    missing &= ~bad
                self._mark(name, c.source, missing, "missing required value")
            self.arrays[name] = arr

    def _mark(self, name: str, source: str, bad: np.ndarray | None, label: str) -> None:
        if bad is None or not bad.any():
            return
        self.bad |= bad
        raw = self._raw(source)
        for i in np.flatnonzero(bad):
            self.reasons[int(i)].append(f"{self._table.name}.{name}: {label} ({_short(raw[i])})")
