"""Typed page reading: a page's JSON decoded straight into msgspec Structs, then into columns.

The Structs are derived from the lake tables (`lake.tables`, through each table's `Plan`), never
written by hand: one field per wire field the table knows, typed by its column's kind
(`_TYPES`), a nested object as a Struct of its own, each child section as a list of the child
table's Struct; a field known but not read here (not landed, or set from the parent or the
section) is `msgspec.Raw`, skipped without building a value. Every Struct forbids unknown
fields. The decoder therefore accepts a page only when every value has its kind's JSON type and
no field is unknown; columns are then built without a dict per record: each table's rows become
tuples of their fields (`msgspec.structs.astuple`, at C speed) transposed into one tuple per
field, and every column becomes one typed Arrow array.

A page the decoder refuses (an unknown field, which must land in `_extra`; a value of another
JSON type; a non-object record or child item; bytes that are not JSON), or whose typed columns
hold any bad value (`Normaliser` checks), is read from dicts column by column instead
(`assets.normalise`), whose converters decide the quarantine. Both reads give the same lake
rows for the same page: tests/assets/test_normalise_paths.py.

A page arrives as bytes when it is an undecoded `LazyRecords` (the client's skim); a page of
dicts is encoded back to JSON first (orjson, ~1 GB/s), so every page goes through one read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import msgspec
import numpy as np
import orjson
import pyarrow as pa

from assets import compiled
from assets.columns import Plan, Read
from assets.convert import _ARROW_ERRORS
from service.lazy import LazyRecords

# kind -> the JSON values its Struct field accepts (missing and null are None). Integers are
# exact (`int` refuses 2.5, 7.0 and true); amounts and floats take integers as well. Kinds not
# here (lists, translations) are decoded as Python values and read by their converter.
_TYPES: dict[str, Any] = {
    "id": int | None,
    "int": int | None,
    "float": int | float | None,
    "money": int | float | None,
    "bool": bool | None,
    "str": str | None,
    "date": str | None,
    "datetime": str | None,
}
# kind -> the Arrow type its decoded values are read as (`assets.convert.from_wire` finishes).
_ARROW: dict[str, pa.DataType] = {
    "id": pa.int64(),
    "int": pa.int64(),
    "float": pa.float64(),
    "money": pa.float64(),
    "bool": pa.bool_(),
    "str": pa.string(),
    "date": pa.string(),
    "datetime": pa.string(),
}


@dataclass(frozen=True)
class Shape:
    """One table's Struct and what to read from it."""

    struct: type[msgspec.Struct]
    names: tuple[str, ...]  # wire name of each Struct field, in order
    nested: dict[str, tuple[str, ...]]  # nested object -> wire names of its Struct's fields
    typed: tuple[tuple[str, str], ...]  # (wire source, kind) read as one typed Arrow array
    subs: dict[str, type[msgspec.Struct]]  # nested object -> its Struct


def _struct(name: str, fields: Mapping[str, Any]) -> type[msgspec.Struct]:
    # Positional field names, renamed to the wire's: a wire name need not be an identifier.
    names = list(fields)
    return msgspec.defstruct(
        name,
        [(f"f{i}", fields[k], None) for i, k in enumerate(names)],
        rename={f"f{i}": k for i, k in enumerate(names)},
        forbid_unknown_fields=True,
        gc=False,  # records hold no cycles; the collector need not track them
    )


def _field(kind: str | None) -> Any:
    """A field's type: `Raw` when it is not read, else its kind's JSON type (Python values for
    the kinds a converter reads)."""
    if kind is None:
        return msgspec.Raw
    return _TYPES.get(kind, Any)


def shape_of(
    plan: Plan, preset: frozenset[str], sections: Mapping[str, type[msgspec.Struct]]
) -> Shape:
    """The Struct of `plan`'s table: columns in `preset` (lake names) are known, not read."""
    table = plan.table
    read = {c.source: c.kind for c in plan.columns if c.column not in preset}
    fields: dict[str, Any] = {}
    nested: dict[str, tuple[str, ...]] = {}
    subs: dict[str, type[msgspec.Struct]] = {}
    for head in sorted(table.known_fields() | set(sections)):
        if head in sections:
            fields[head] = list[sections[head]] | None  # type: ignore[name-defined]
        elif head in plan.sub_known:
            tails = tuple(sorted(plan.sub_known[head]))
            sub = {t: _field(read.get(f"{head}.{t}")) for t in tails}
            subs[head] = _struct(f"{table.name}_{head}", sub)
            fields[head] = subs[head] | None
            nested[head] = tails
        else:
            fields[head] = _field(read.get(head))
    typed = tuple((s, k) for s, k in read.items() if k in _ARROW)
    return Shape(_struct(table.name, fields), tuple(fields), nested, typed, subs)


@dataclass(frozen=True)
class TypedPage:
    """A page read by the typed decoder: the root table's read, and per child table its read,
    each row's record index and the number of rows of each section."""

    root: Read
    children: dict[str, tuple[Read, np.ndarray, list[int]]]


class TypedReader:
    """Reads pages of one spec: `root` is the root table's shape, `children` each child
    table's shape with the section fields it is read from (in the spec's order)."""

    def __init__(self, root: Shape, children: dict[str, tuple[Shape, tuple[str, ...]]]) -> None:
        self.root, self.children = root, children
        item = root.struct
        envelope = msgspec.defstruct(
            "TypedPageEnvelope",
            [("content", list[item] | None, None)],  # type: ignore[valid-type]
            forbid_unknown_fields=False,
        )
        self._decoder = msgspec.json.Decoder(envelope | list[item])  # type: ignore[valid-type]
        self._compiled: compiled.CompiledReader | None = None
        if compiled.available():
            try:
                self._compiled = compiled.CompiledReader(
                    _compiled(root),
                    {name: (_compiled(s), fields) for name, (s, fields) in children.items()},
                )
            except compiled.Unreadable as e:
                compiled.unreadable(e)

    @property
    def compiled(self) -> bool:
        """Whether its columns are built by the C extension (`assets.compiled`)."""
        return self._compiled is not None

    def read(self, records: Sequence[Any]) -> TypedPage | None:
        """The page's columns, or None when the typed decoder cannot vouch for every value.

        Call it with the cyclic GC paused (`Normaliser.normalise` does, for the whole page)."""
        body = records.body() if isinstance(records, LazyRecords) else None
        if body is not None and not valid_utf8(body):  # as orjson refuses it, even unread
            return None
        try:
            if body is None:
                body = orjson.dumps(list(records))
            page = self._decoder.decode(body)
        except (orjson.JSONEncodeError, msgspec.MsgspecError):
            return None
        rows = page if isinstance(page, list) else (page.content or [])
        if len(rows) != len(records):  # the records counted are not the records decoded
            return None
        if self._compiled is not None:
            built = self._compiled.page(rows)
            if built is not None:
                return TypedPage(*built)
        try:
            return self._page(rows)
        except _ARROW_ERRORS:  # an integer beyond int64, say
            return None

    def _page(self, rows: list[Any]) -> TypedPage:
        n = len(rows)
        root_cols = _columns(self.root, rows)
        children: dict[str, tuple[Read, np.ndarray, list[int]]] = {}
        for name, (shape, fields) in self.children.items():
            items: list[Any] = []
            parents: list[np.ndarray] = []
            totals: list[int] = []
            for f in fields:
                lists = root_cols[f]
                try:  # at C speed when every record has the section (an empty list or more)
                    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=n)
                except TypeError:  # some have none
                    lengths = np.array([len(v) if v else 0 for v in lists], dtype=np.int64)
                total = int(lengths.sum())
                if total:
                    items.extend(chain.from_iterable(filter(None, lists)))
                    parents.append(np.repeat(np.arange(n, dtype=np.int64), lengths))
                totals.append(total)
            parent_idx = np.concatenate(parents) if parents else np.zeros(0, dtype=np.int64)
            children[name] = (_read(shape, items, _columns(shape, items)), parent_idx, totals)
        return TypedPage(_read(self.root, rows, root_cols), children)


def _compiled(shape: Shape) -> compiled.CompiledShape:
    return compiled.CompiledShape(shape.struct, shape.names, shape.nested, shape.subs, shape.typed)


def valid_utf8(body: bytes) -> bool:
    """Whether `body` is UTF-8 (orjson refuses a page that is not; msgspec and `pyarrow.json`
    do not check inside strings). Arrow's validator over the bytes as one string, no copy:
    0.25 ms for a 5.9 MB page of sandbox details, against 3.6 ms for `bytes.decode`, which
    builds the text (docs/benchmarks.md, session 12)."""
    offsets = pa.py_buffer(np.array([0, len(body)], dtype=np.int64))
    text = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(body)])
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _columns(shape: Shape, rows: list[Any]) -> dict[str, Sequence[Any]]:
    """Each wire field's values (nested objects' fields as `head.tail`), one tuple per field."""
    n = len(rows)
    if n:
        cols = dict(
            zip(shape.names, zip(*map(msgspec.structs.astuple, rows), strict=True), strict=True)
        )
    else:
        cols = {k: () for k in shape.names}
    for head, tails in shape.nested.items():
        objs = cols[head]
        empty = (None,) * len(tails)
        subs = zip(*(empty if o is None else msgspec.structs.astuple(o) for o in objs), strict=True)
        for tail, values in zip(tails, subs if n else ((),) * len(tails), strict=True):
            cols[f"{head}.{tail}"] = values
    return cols


def _read(shape: Shape, rows: list[Any], cols: dict[str, Sequence[Any]]) -> Read:
    wire = {s: _array(cols[s], _ARROW[k]) for s, k in shape.typed}
    return Read(len(rows), cols.__getitem__, wire, None)


def _array(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    if type_ == pa.int64():
        # A column of integers without nulls through numpy: ~40 % less than Arrow's own
        # conversion of Python ints (the decoder made them ints; a null raises TypeError).
        try:
            return pa.array(np.fromiter(values, dtype=np.int64, count=len(values)))
        except TypeError:
            pass
    return pa.array(values, type=type_)
