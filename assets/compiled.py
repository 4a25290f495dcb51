"""The typed read's columns built in C (`assets/_columns.c`), when the extension is built.

`assets.typed` decodes a page into msgspec Structs; turning them into typed Arrow arrays in
Python (`msgspec.structs.astuple`, a transposition, `pa.array` per column) cost about as much
as the decode itself. The extension reads each Struct's fields at their slots and fills the
Arrow buffers directly; here they become arrays with `pa.Array.from_buffers` (no copy). The
columns that are not typed (lists, translations) and the values quoted in reasons are read as
Python values, on demand. A page the extension is not sure of (an integer beyond int64, say)
gives None, and `assets.typed` reads it in Python, which decides as before: both give the same
arrays (tests/assets/test_normalise_compiled.py).

`make setup` builds the extension (setuptools, the machine's C compiler). Without it,
`COMPILED` is False, one log line says so, and the typed read stays in Python.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa

from assets.columns import Read
from lake.schema import TIMESTAMP

try:
    from assets import _columns  # type: ignore[attr-defined]
except ImportError:  # not built: the typed read stays in Python
    _columns = None

log = logging.getLogger(__name__)
COMPILED = _columns is not None
_warned = False

# kind -> the extension's column kind: dates and datetimes in the service's form are parsed
# there (else the column comes back as text, and Arrow's cast decides as without it)
_KINDS: dict[str, int] = {
    "id": 0,
    "int": 0,
    "float": 1,
    "money": 1,
    "bool": 2,
    "str": 3,
    "date": 4,
    "datetime": 5,
}
# the extension's column kind -> the Arrow type of its buffers
_TYPES = (pa.int64(), pa.float64(), pa.bool_(), pa.string(), pa.date32(), TIMESTAMP)

Slot = tuple[int, int, Any]  # (offset, offset in the nested Struct or -1, the nested Struct)


def available() -> bool:
    """Whether the extension is built; says once in the log when it is not."""
    global _warned
    if not COMPILED and not _warned:
        _warned = True
        log.warning(
            "assets._columns is not built (install a C compiler, e.g. `apt-get install gcc`, "
            "then run `make setup`): the typed read builds its columns in Python, and the "
            "normaliser takes ~1.5x the CPU"
        )
    return COMPILED


class Unreadable(Exception):
    """A Struct whose fields are not slots the extension can read (a msgspec that keeps them
    otherwise than 0.22.0, which is pinned)."""


def unreadable(error: Unreadable) -> None:
    """Says once in the log that the typed read builds its columns in Python after all."""
    global _warned
    if not _warned:
        _warned = True
        log.warning("assets._columns cannot read msgspec's Structs (%s): columns in Python", error)


def _offset(struct: type[msgspec.Struct], i: int) -> int:
    try:
        return int(_columns.member_offset(struct.__dict__[f"f{i}"]))
    except (KeyError, TypeError) as e:
        raise Unreadable(f"{struct.__name__}.f{i}: {e}") from e


class CompiledShape:
    """Where each wire field of a table's Struct (`assets.typed.Shape`) sits: `names` the wire
    name of each field in order, `nested` and `subs` each nested object's fields and Struct,
    `typed` the (wire source, kind) of each column read as a typed Arrow array."""

    def __init__(
        self,
        struct: type[msgspec.Struct],
        names: Sequence[str],
        nested: dict[str, tuple[str, ...]],
        subs: dict[str, type[msgspec.Struct]],
        typed: Sequence[tuple[str, str]],
    ) -> None:
        self.struct = struct
        self.slots: dict[str, Slot] = {}
        for i, name in enumerate(names):
            self.slots[name] = (_offset(struct, i), -1, None)
        for head, tails in nested.items():
            sub = subs[head]
            for j, tail in enumerate(tails):
                self.slots[f"{head}.{tail}"] = (self.slots[head][0], _offset(sub, j), sub)
        self.typed = tuple(typed)
        self.specs = tuple((*self.slots[s], _KINDS[k]) for s, k in self.typed)

    def read(self, rows: list[Any]) -> Read | None:
        """The rows' read: typed columns built by the extension, the rest on demand."""
        built = _columns.columns(rows, self.struct, self.specs)
        if built is None:
            return None
        n = len(rows)
        wire: dict[str, pa.Array] = {}
        for (source, _), (kind, nulls, validity, data, offsets) in zip(
            self.typed, built, strict=True
        ):
            type_ = _TYPES[kind]
            valid = None if validity is None else pa.py_buffer(validity)
            buffers = [valid, pa.py_buffer(data)]
            if offsets is not None:
                buffers.insert(1, pa.py_buffer(offsets))
            wire[source] = pa.Array.from_buffers(type_, n, buffers, null_count=nulls)
        struct, slots = self.struct, self.slots

        def raw(source: str) -> Sequence[Any]:
            return _columns.values(rows, struct, *slots[source])

        return Read(n, raw, wire, None)


ChildRead = tuple[Read, np.ndarray, list[int]]


class CompiledReader:
    """A `TypedReader`'s pages built by the extension: `root` its root table's fields,
    `children` each child table's with the section fields it is read from."""

    def __init__(
        self, root: CompiledShape, children: dict[str, tuple[CompiledShape, tuple[str, ...]]]
    ) -> None:
        self.root = root
        self.children = {
            name: (shape, tuple(root.slots[f][0] for f in fields))
            for name, (shape, fields) in children.items()
        }

    def page(self, rows: list[Any]) -> tuple[Read, dict[str, ChildRead]] | None:
        """The page's reads (the root's, each child table's with its rows' record indexes and
        the number of rows of each section), or None where the extension is not sure of a
        value."""
        root = self.root.read(rows)
        if root is None:
            return None
        children: dict[str, ChildRead] = {}
        for name, (shape, offsets) in self.children.items():
            items, parents, totals = _columns.sections(rows, self.root.struct, offsets)
            read = shape.read(items)
            if read is None:
                return None
            children[name] = (read, np.frombuffer(parents, dtype=np.int64), list(totals))
        return root, children
