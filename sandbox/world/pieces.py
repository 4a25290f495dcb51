"""Text pieces of JSON values from numpy columns: the small tables of digits, signs and cents the columns join, with no per-value Python formatting."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

Piece = "str | pa.Array | Taken | Numbers"
Pieces = list[Any]
Getter = Callable[[Any, int], list[Any]]  # (slice or int array of positions, count) -> values
NULL = -(2**31)  # null marker of int columns
EXACT_CENTS = 10**15  # below this, c / 100 prints as the exact decimal (see module docstring)
SMALL_RANGE = 1 << 16  # int columns spanning at most this many values are looked up in a table
MAX_TABLE_DAYS = 200_000  # a date column spanning more days is encoded value by value
MAX_COMBINATIONS = 1 << 18  # a run of lookups is fused while its combinations fit in this
DAY_MS = 86_400_000
EPOCH_ORD = date(1970, 1, 1).toordinal()


# The compute functions called directly: their Python wrappers cost more than the work on a
# page of a hundred rows (turning literal strings into scalars, building options).
TAKE = pc.get_function("array_take")
CAST = pc.get_function("cast")
TO_STRING = pc.CastOptions.safe(pa.string())
JOIN = pc.get_function("binary_join_element_wise")
COALESCE = pc.get_function("coalesce")
NO_SEPARATOR = pa.scalar("", type=pa.string())
SCALARS: dict[str, pa.Scalar] = {}


def dumps_text(value: Any) -> str:
    """orjson's text of one value (orjson writes UTF-8, so this decodes losslessly)."""
    return orjson.dumps(value).decode()


def json_inner(text: str) -> str:
    """JSON text of a string without its quotes (for pieces of a composed value)."""
    return dumps_text(text)[1:-1]


class Taken:
    """`table[index]`, not copied yet: the row join (`sandbox.world.rows.join_pieces`) reads
    each row's text straight from the table; `array()` is Arrow's take of it."""

    __slots__ = ("index", "table")

    def __init__(self, table: pa.Array, index: np.ndarray) -> None:
        self.table = table
        self.index = index

    def __len__(self) -> int:
        return len(self.index)

    def array(self) -> pa.Array:
        return TAKE.call([self.table, pa.array(self.index, type=pa.int64())])


def take_text(table: pa.Array, index: np.ndarray) -> Taken:
    """`table[index]` (an array of positions, bounds-checked now: ArrowIndexError), as a piece
    that the row join reads from the table (`Taken`)."""
    at = np.ascontiguousarray(index, dtype=np.int64)
    if len(at) and (int(at.min()) < 0 or int(at.max()) >= len(table)):
        raise pa.ArrowIndexError(f"index out of bounds for a table of {len(table)} texts")
    return Taken(table, at)


class Numbers:
    """Integers as decimal text, not written yet: the row join writes them (`array()`:
    Arrow's cast, the same text)."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def array(self) -> pa.Array:
        return CAST.call([pa.array(self.values)], TO_STRING)


def decimal_text(values: np.ndarray) -> Numbers | pa.Array:
    """The decimal text of integers (Arrow's cast of other values)."""
    kind, size = values.dtype.kind, values.dtype.itemsize
    if kind == "i" or (kind == "u" and size < 8):
        return Numbers(np.ascontiguousarray(values, dtype=np.int64))
    return CAST.call([pa.array(values)], TO_STRING)


def values_json(values: Sequence[Any]) -> pa.Array:
    """The generic path: each value through orjson."""
    return pa.array([orjson.dumps(v) for v in values], type=pa.binary()).cast(pa.string())


def scalar_of(text: str) -> pa.Scalar:
    found = SCALARS.get(text)
    if found is None:
        if len(SCALARS) > 4096:  # literals are a few per block: this never grows far
            SCALARS.clear()
        found = SCALARS[text] = pa.scalar(text, type=pa.string())
    return found


def span(
    a: np.ndarray, where: np.ndarray | None, empty: tuple[int, int] = (0, 0)
) -> tuple[int, int]:
    """Smallest and largest value of `a` (where `where`), without copying the column."""
    if where is not None and not where.any():
        return empty
    if not len(a):
        return empty
    info = np.iinfo(a.dtype)
    lo = a.min(initial=info.max, where=True if where is None else where)
    hi = a.max(initial=info.min, where=True if where is None else where)
    return int(lo), int(hi)


def positions_of(idx: Any, n: int) -> np.ndarray:
    if isinstance(idx, slice):
        return np.arange(idx.start, idx.start + n, dtype=np.int64)
    return np.asarray(idx, dtype=np.int64)


class Tables:
    """A table of texts as string arrays with a prefix and a suffix folded into every entry,
    built once per (prefix, suffix). With `bare`, one more entry: prefix and suffix alone."""

    def __init__(self, texts: Callable[[], list[str]], *, bare: bool = False) -> None:
        self._texts = texts
        self._bare = bare
        self._base: list[str] | None = None
        self._built: dict[tuple[str, str], pa.Array] = {}

    def base(self) -> list[str]:
        if self._base is None:
            self._base = self._texts()
        return self._base

    def get(self, prefix: str = "", suffix: str = "") -> pa.Array:
        table = self._built.get((prefix, suffix))
        if table is None:
            texts = [prefix + t + suffix for t in self.base()]
            if self._bare:
                texts.append(prefix + suffix)
            table = self._built[(prefix, suffix)] = pa.array(texts, type=pa.string())
        return table


DIGITS4 = Tables(lambda: [f"{k:04d}" for k in range(10**4)] + [""])  # "" for a null
DIGITS4_CLOSE = Tables(lambda: [f'{k:04d}"' for k in range(10**4)], bare=True)
_CENTS = Tables(
    lambda: [
        ".0" if f == 0 else (f".{f // 10}" if f % 10 == 0 else f".{f:02d}") for f in range(100)
    ]
)
_SIGN = Tables(lambda: ["", "-"])
SECONDS = Tables(
    lambda: [f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(86400)] + [""]
)
MILLIS = Tables(lambda: [f'.{m:03d}"' for m in range(1000)], bare=True)


def json_pieces(getter: Getter, idx: Any, n: int, prefix: str = "", suffix: str = "") -> Pieces:
    fn = getattr(getter, "pieces", None)
    if fn is not None:
        return fn(idx, n, prefix, suffix)
    return [prefix, values_json(getter(idx, n)), suffix]


def folds(getter: Getter) -> tuple[bool, bool]:
    """Whether a column writes its prefix / suffix into its own pieces (`folds` attribute)."""
    return getattr(getter, "folds", (False, False))


def int_pieces(values: np.ndarray, prefix: str, suffix: str, null: Any = None) -> Pieces:
    """Decimal text of integers (`null` marks the ones written as null)."""
    if null is not None and null.any():
        masked = pa.array(values, mask=null)
        text = CAST.call([masked], TO_STRING)
        text = COALESCE.call([text, scalar_of("null")])
    else:
        text = decimal_text(values)
    return [prefix, text, suffix]


def cents_pieces(cents: np.ndarray, prefix: str, suffix: str) -> Pieces:
    """The text orjson writes for `cents / 100` (floats), cents given as integers."""
    c = np.asarray(cents, dtype=np.int64)
    if len(c) and int(np.abs(c).max()) >= EXACT_CENTS:
        return [prefix, values_json((c / 100).tolist()), suffix]
    a = np.abs(c)
    whole = decimal_text(a // 100)
    frac = take_text(_CENTS.get("", suffix), a % 100)
    neg = c < 0
    if neg.any():
        return [take_text(_SIGN.get(prefix), neg.view(np.int8)), whole, frac]
    return [prefix, whole, frac]
