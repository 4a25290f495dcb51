"""Columnar page reading: a page's JSON straight into Arrow columns, no Python object per value.

`pyarrow.json` parses the page body (`{"content": [...]}`, one JSON object) with an explicit
schema derived from the lake tables, as `assets.typed` derives its Structs: per table one field
per column read (its kind's Arrow type, `assets.typed._ARROW`), each section a list of its child
table's struct, nested objects as structs. Fields not in the schema are inferred
(`unexpected_field_behavior="infer"`) and appear as extra fields of their struct, so every level
is checked against the fields its table knows: one unknown field and the page is declined. The
parser is strict where the typed decoder is: a value of another JSON type (`"12"` or `true` for
an integer, `12` for text), an integer written `2.5`, `7.0` or `1e3`, one beyond int64, a
repeated key, a non-object record or child item and bytes that are not one JSON object all fail
the read. What it accepts and the typed decoder does not is declined here: `NaN` and `Infinity`
(a non-finite amount or float column; any floating field inferred outside the schema), invalid
UTF-8 (checked before), null records or child items, amounts and floats of 2**53 or more (the
typed read and the converters part ways on integers there).

A declined page goes to the typed decoder (`assets.typed`), then column by column
(`assets.normalise`); a page read here whose columns hold a bad value (a bad date, an unknown
code, a missing required value) is read column by column, as from the typed decoder. Both reads
give the same lake rows for the same page: tests/assets/test_normalise_columnar.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from assets.columns import Plan, Read
from assets.convert import _ARROW_ERRORS, EXACT_INT_LIMIT, all_below
from assets.endpoints import EndpointSpec
from assets.typed import _ARROW, TypedPage, valid_utf8
from service.lazy import LazyRecords


@dataclass(frozen=True)
class Level:
    """One table's struct in the page schema and what to check and read from it."""

    fields: tuple[pa.Field, ...]  # explicit fields: columns read, sections, nested objects
    known: frozenset[str]  # every wire field the table knows (and its sections)
    typed: tuple[tuple[str, str], ...]  # (wire source, kind) of each column read
    nested: dict[str, frozenset[str]]  # nested object (read or not) -> its known fields
    explicit: frozenset[str]  # sources read and fields of the struct (no floating check)
    floats: tuple[str, ...]  # sources read as floats or amounts (checked finite)
    # struct type of a page's rows -> whether it can be read (`_accepts`); nearly every page
    # of a run has the same few types, so the checks of names and types run once for each
    verdicts: dict[pa.StructType, bool] = field(default_factory=dict, compare=False)
    _names: dict[pa.StructType, tuple[str, ...]] = field(default_factory=dict, compare=False)

    def names(self, struct: pa.StructType) -> tuple[str, ...]:
        """The field names of `struct` (of the rows, or of a nested object), kept by type."""
        names = self._names.get(struct)
        if names is None:
            names = self._names[struct] = tuple(
                struct.field(i).name for i in range(struct.num_fields)
            )
        return names

    @property
    def struct(self) -> pa.StructType:
        return pa.struct(list(self.fields))


def level_of(plan: Plan, preset: frozenset[str], sections: Mapping[str, pa.DataType]) -> Level:
    """`plan`'s table as an Arrow struct: columns in `preset` (lake names) are known, not read
    (inferred when present, as every field not read)."""
    read = [(c.source, c.kind) for c in plan.columns if c.column not in preset]
    fields: list[pa.Field] = []
    subs: dict[str, list[pa.Field]] = {}
    for source, kind in read:
        head, _, tail = source.partition(".")
        if tail:
            subs.setdefault(head, []).append(pa.field(tail, _ARROW[kind]))
        else:
            fields.append(pa.field(source, _ARROW[kind]))
    fields.extend(pa.field(head, pa.struct(sub)) for head, sub in subs.items())
    fields.extend(pa.field(name, pa.list_(item)) for name, item in sections.items())
    known = plan.known | frozenset(sections)
    explicit = frozenset(s for s, _ in read) | frozenset(f.name for f in fields)
    floats = tuple(s for s, k in read if k in ("float", "money"))
    return Level(tuple(fields), known, tuple(read), dict(plan.sub_known), explicit, floats)


def supported(plan: Plan) -> bool:
    """Whether every column the table lands has an Arrow type to be read as (lists and
    translations are read by their converters from Python values)."""
    return all(c.kind in _ARROW for c in plan.columns)


def columnar_reader(
    spec: EndpointSpec, plans: Mapping[str, Plan], preset: Mapping[str, frozenset[str]]
) -> ColumnarReader | None:
    """The reader of `spec`'s pages (`plans` per table; `preset` per child table, its columns
    set from the parent or the section), None when a column has no Arrow type."""
    if not all(map(supported, plans.values())):
        return None
    levels = {name: level_of(plans[name], fixed, {}) for name, fixed in preset.items()}
    fields: dict[str, list[str]] = {}
    for s in spec.sections:
        fields.setdefault(s.table.name, []).append(s.field)
    sections = {s.field: levels[s.table.name].struct for s in spec.sections}
    root = level_of(plans[spec.table.name], frozenset(), sections)
    return ColumnarReader(root, {name: (levels[name], tuple(f)) for name, f in fields.items()})


class ColumnarReader:
    """Reads pages of one spec: `root` the root table's level, `children` each child table's
    level with the section fields it is read from (in the spec's order)."""

    def __init__(self, root: Level, children: dict[str, tuple[Level, tuple[str, ...]]]) -> None:
        self.root, self.children = root, children
        schema = pa.schema([pa.field("content", pa.list_(root.struct))])
        self._parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")

    def read(self, records: Sequence[Any]) -> TypedPage | None:
        """The page's columns, or None when this read cannot vouch for every value."""
        body = records.body() if isinstance(records, LazyRecords) else None
        if body is not None and not valid_utf8(body):  # the parser does not check it
            return None
        try:
            if body is None:
                body = orjson.dumps({"content": list(records)})
            # the page is one JSON object: one block holds it whole
            read = pj.ReadOptions(use_threads=False, block_size=max(len(body) + 1, 1 << 20))
            table = pj.read_json(pa.py_buffer(body), read_options=read, parse_options=self._parse)
        except (orjson.JSONEncodeError, *_ARROW_ERRORS):
            return None
        if table.num_rows != 1 or _floating(table.schema, {"content"}):
            return None  # more than one JSON value, or a NaN/Infinity outside the schema
        content = table.column("content").chunk(0)
        if content.null_count:  # no `content`, or null
            return None
        rows = _values(content)
        if rows.null_count or len(rows) != len(records):  # a null record; a count that differs
            return None
        try:
            return self._page(rows)
        except _ARROW_ERRORS:
            return None

    def _page(self, rows: pa.StructArray) -> TypedPage | None:
        n = len(rows)
        root = _fields(self.root, rows)
        if root is None:
            return None
        children: dict[str, tuple[Read, np.ndarray, list[int]]] = {}
        for name, (level, sections) in self.children.items():
            items: list[pa.StructArray] = []
            parents: list[np.ndarray] = []
            totals: list[int] = []
            for section in sections:
                lists = root[section]
                flat = _values(lists)
                if flat.null_count:  # a null child item
                    return None
                if len(flat):
                    items.append(flat)
                    parents.append(pc.list_parent_indices(lists).to_numpy())
                totals.append(len(flat))
            cols = _items(level, items)
            if cols is None:
                return None
            parent_idx = (
                np.concatenate(parents).astype(np.int64) if parents else np.zeros(0, np.int64)
            )
            children[name] = (_read(level, cols, sum(totals)), parent_idx, totals)
        return TypedPage(_read(self.root, root, n), children)


def _values(lists: pa.ListArray) -> pa.Array:
    """The items of `lists` in order, as `flatten()` gives them: without nulls, the slice of
    its values between its first and last offsets (a view; `flatten()` costs ~5x more)."""
    if lists.null_count:
        return lists.flatten()
    offsets = lists.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    return lists.values.slice(first, last - first)


def _items(level: Level, items: list[pa.StructArray]) -> dict[str, pa.Array] | None:
    """The columns of a child table's items from all its sections (section by section), or
    None as `_fields`. Sections whose items have one struct type (the fields inferred outside
    the schema alike) are joined first and read as one array; else each is read apart."""
    if len(items) == 1 or (items and all(i.type == items[0].type for i in items)):
        return _fields(level, items[0] if len(items) == 1 else pa.concat_arrays(items))
    parts: list[dict[str, pa.Array]] = []
    for flat in items:
        cols = _fields(level, flat)
        if cols is None:
            return None
        parts.append(cols)
    return {
        source: _concat([p[source] for p in parts], _ARROW[kind]) for source, kind in level.typed
    }


def _concat(arrays: list[pa.Array], type_: pa.DataType) -> pa.Array:
    if len(arrays) == 1:
        return arrays[0]
    return pa.concat_arrays(arrays) if arrays else pa.array([], type=type_)


def _fields(level: Level, rows: pa.StructArray) -> dict[str, pa.Array] | None:
    """Each field of `rows` (nested objects' fields as `head.tail`), or None when a field is
    unknown, or a value the typed decoder refuses got through."""
    struct: pa.StructType = rows.type
    accepted = level.verdicts.get(struct)
    if accepted is None:
        if len(level.verdicts) >= 256:  # a stream of ever new types (unknown fields) stays small
            level.verdicts.clear()
            level._names.clear()
        accepted = level.verdicts[struct] = _accepts(level, struct)
    if not accepted:
        return None
    cols = dict(zip(level.names(struct), rows.flatten(), strict=True))
    for head in level.nested:
        obj = cols.get(head)
        if obj is None or obj.type == pa.null():  # absent or null throughout
            continue
        sub: pa.StructType = obj.type
        for tail, values in zip(level.names(sub), obj.flatten(), strict=True):
            cols[f"{head}.{tail}"] = values
    if not all(_finite(cols[source]) for source in level.floats):
        return None
    return cols


def _accepts(level: Level, struct: pa.StructType) -> bool:
    """Whether rows of this struct type can be read (what the type alone says, the same for
    every page whose rows have it): every field known, no floating value outside the fields
    read (a NaN or Infinity there), every nested object an object of known fields."""
    names = level.names(struct)
    if not level.known.issuperset(names):
        return False
    explicit = level.explicit
    fields = pa.schema([struct.field(i) for i in range(struct.num_fields)])
    if _floating(fields, explicit | level.nested.keys()):  # nested objects: checked below
        return False
    for head, known in level.nested.items():  # read or not, an unknown field lands in `_extra`
        if head not in names:
            continue
        obj_type = struct.field(head).type
        if obj_type == pa.null():  # null throughout
            continue
        if not pa.types.is_struct(obj_type):
            return False
        tails = level.names(obj_type)
        if not known.issuperset(tails):
            return False
        read = {t for t in tails if f"{head}.{t}" in explicit}
        if _floating(pa.schema([obj_type.field(i) for i in range(obj_type.num_fields)]), read):
            return False
    return True


def _finite(values: pa.Array) -> bool:
    """No NaN or infinity (which the parser takes as literals), nothing of 2**53 or more."""
    return all_below(values, EXACT_INT_LIMIT)


def _floating(schema: pa.Schema, explicit: set[str]) -> bool:
    """Whether a field outside `explicit` holds a floating value anywhere inside it (only a
    number with a fraction or exponent, NaN or Infinity is inferred as one)."""

    def has(t: pa.DataType) -> bool:
        if pa.types.is_floating(t):
            return True
        if pa.types.is_struct(t):
            return any(has(t.field(i).type) for i in range(t.num_fields))
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return has(t.value_type)
        return False

    return any(has(f.type) for f in schema if f.name not in explicit)


def _read(level: Level, cols: dict[str, pa.Array], n: int) -> Read:
    wire = {s: cols[s] for s, _ in level.typed}
    cache: dict[str, list[Any]] = {}

    def raw(source: str) -> list[Any]:  # Python values, only to quote a bad one
        if source not in cache:
            cache[source] = cols[source].to_pylist()
        return cache[source]

    return Read(n, raw, wire, None)
