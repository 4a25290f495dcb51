"""Columns of a frozen block (`store.Block`): each gives its values for the dict path and the
JSON text of those values for the encoder, computed a column at a time (numpy + pyarrow).

A column is a getter `(idx, n) -> list of values` (idx: a slice or an int array of positions,
n: how many). It may also have `pieces(idx, n, prefix, suffix) -> Pieces`: the JSON text of
each value between the literals `prefix` and `suffix`, as a list of pieces whose concatenation,
row by row, is `prefix + orjson.dumps(value) + suffix`. A piece is a `str` (the same text for
every row) or a pyarrow string array (one text per row). A getter without `pieces` (a plain
function) is encoded value by value with orjson.

Joining the pieces of a row costs about the same for every piece, so the literal text between
values (the keys) is folded into a neighbour where one comes from a table: a value looked up in
a table of texts (a vocabulary, days, small ints: a "lookup" column, see `Lookup`) takes its
prefix and suffix into the table. Adjacent lookup columns become one lookup over the
combinations that occur (`LookupRun`).

`RowPlan` joins the pieces of every field into the JSON object of each row, which is byte for
byte what `orjson.dumps` gives for the rendered dict: orjson writes compact JSON, a dict as `{` +
`"key":value` items joined by `,` + `}`, so a record's text is its values' texts between the
encoded keys, and JSON escaping works character by character, so the text of a concatenation
is the concatenation of the texts. Numbers that are not ints are the risky part: money is kept
as integer cents, and `cents_pieces` writes `c / 100` as orjson does (shortest round trip: for
|c| < 10**15 that is the exact decimal, trailing zeros dropped, at least one fractional digit);
larger amounts fall back to orjson.

Columns are read-only once their block is built (a changed record is thawed into the block's
overlay instead): tables computed from a column's range stay valid, and a value outside them is
caught by the bounds check of the lookup and written the generic way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sandbox.world.pieces import (
    DIGITS4,
    DIGITS4_CLOSE,
    NULL,
    SMALL_RANGE,
    Getter,
    Numbers,
    Pieces,
    Tables,
    cents_pieces,
    decimal_text,
    dumps_text,
    int_pieces,
    positions_of,
    span,
    take_text,
    values_json,
)


class Lookup:
    """A column whose JSON texts come from a table: `lookup(idx, n)` gives each row's position
    in `texts()` (None when a value is outside the table), and its pieces are one take from the
    table with the prefix and the suffix folded in."""

    folds = (True, True)

    def texts(self) -> list[str]:
        raise NotImplementedError

    def lookup(self, idx: Any, n: int) -> np.ndarray | None:
        raise NotImplementedError

    def _tables(self) -> Tables:
        tables = self.__dict__.get("_text_tables")
        if tables is None:
            tables = self.__dict__["_text_tables"] = Tables(self.texts)
        return tables

    def texts_cached(self) -> list[str]:
        return self._tables().base()

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        index = self.lookup(idx, n)
        if index is not None:
            try:
                return [take_text(self._tables().get(prefix, suffix), index)]
            except pa.ArrowIndexError:  # a value outside the table (see the module docstring)
                pass
        return [prefix, values_json(self(idx, n)), suffix]  # type: ignore[operator]


class IntColumn(Lookup):
    """Integers; with `nullable`, the value NULL is None. A column spanning a small range is a
    lookup in the decimals of that range."""

    def __init__(self, a: np.ndarray, nullable: bool = False) -> None:
        self.a = a
        self.nullable = nullable
        self._range: tuple[int, int] | None = None  # lo, hi; hi < lo: not a small range

    def __call__(self, idx: Any, n: int) -> list[Any]:
        if self.nullable:
            return [None if v == NULL else v for v in self.a[idx].tolist()]
        return self.a[idx].tolist()

    def _small(self) -> tuple[int, int]:
        if self._range is None:
            a = self.a
            self._range = (0, -1)
            if a.dtype.kind in "iu" and len(a):
                lo, hi = span(a, (a != NULL) if self.nullable else None)
                if hi - lo < SMALL_RANGE:
                    self._range = (lo, hi)
        return self._range

    @property
    def folds(self) -> tuple[bool, bool]:  # type: ignore[override]
        lo, hi = self._small()
        return (hi >= lo, hi >= lo)

    def texts(self) -> list[str]:
        lo, hi = self._small()
        return [str(v) for v in range(lo, hi + 1)] + ["null"]

    def lookup(self, idx: Any, n: int) -> np.ndarray | None:
        lo, hi = self._small()
        if hi < lo:
            return None
        v = self.a[idx]
        index = v.astype(np.int64) - lo
        if self.nullable:
            index[v == NULL] = hi - lo + 1
        return index

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        v = self.a[idx]
        if v.dtype.kind not in "iu":  # bools, floats: as the values are
            return [prefix, values_json(self(idx, n)), suffix]
        lo, hi = self._small()
        if hi >= lo:
            return super().pieces(idx, n, prefix, suffix)
        null = (v.astype(np.int64, copy=False) == NULL) if self.nullable else None
        return int_pieces(v, prefix, suffix, null)


class KeyColumn:
    """The block's own keys (base + position): no column needed."""

    def __init__(self, base: int) -> None:
        self.base = base

    def __call__(self, idx: Any, n: int) -> list[int]:
        if isinstance(idx, slice):
            return list(range(self.base + idx.start, self.base + idx.start + n))
        return (idx + self.base).tolist()

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        return int_pieces(positions_of(idx, n) + self.base, prefix, suffix)


class CentsColumn:
    """Money: integer cents (an array, or a function of the positions) served as cents / 100.
    int64 -> float64 is exact below 2**53 and the division is correctly rounded, so this is the
    float Python's `c / 100` gives, computed in one numpy pass."""

    folds = (False, True)

    def __init__(self, cents: np.ndarray | Callable[[Any], np.ndarray]) -> None:
        self.cents: Callable[[Any], np.ndarray] = (
            cents.__getitem__ if isinstance(cents, np.ndarray) else cents
        )

    def __call__(self, idx: Any, n: int) -> list[float]:
        return (self.cents(idx) / 100).tolist()

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        return cents_pieces(self.cents(idx), prefix, suffix)


class VocabColumn(Lookup):
    """Codes into `vocab`; a negative code counts from the end of `[*vocab, None]` (-1 is None)."""

    def __init__(self, codes: np.ndarray, vocab: Sequence[Any]) -> None:
        self.codes = codes
        self.vocab = [*vocab, None]
        self.table = np.array(self.vocab, dtype=object)

    def __call__(self, idx: Any, n: int) -> list[Any]:
        return self.table[self.codes[idx]].tolist()

    def texts(self) -> list[str]:
        return [dumps_text(v) for v in self.vocab]

    def lookup(self, idx: Any, n: int) -> np.ndarray:
        return np.mod(self.codes[idx].astype(np.int64), len(self.vocab))

    def equals(self, value: Any, idx: Any) -> np.ndarray:
        """Which rows hold a value equal to `value` (what a dict lookup by value would find)."""
        hits = [k for k, v in enumerate(self.vocab) if v == value]
        return np.isin(self.lookup(idx, 0), hits)


class FusedVocab(Lookup):
    """Vocabulary columns over the same codes, adjacent but for literal text between them (the
    keys, constants): one lookup gives `v1,"f2":v2,...` (built by `RowPlan`)."""

    def __init__(self, columns: Sequence[VocabColumn], links: Sequence[str]) -> None:
        self.columns = list(columns)
        self.links = list(links)

    def texts(self) -> list[str]:
        texts = [c.texts() for c in self.columns]
        out = []
        for k in range(len(texts[0])):
            parts = [texts[0][k]]
            for link, col in zip(self.links, texts[1:], strict=True):
                parts += [link, col[k]]
            out.append("".join(parts))
        return out

    def lookup(self, idx: Any, n: int) -> np.ndarray:
        return self.columns[0].lookup(idx, n)


class LookupRun(Lookup):
    """Adjacent lookup columns (literal text between them) as one lookup: a row's combination
    of their table positions is numbered the first time it is met, and its text (the columns'
    texts with the links between) kept. At most MAX_COMBINATIONS combinations (see RowPlan)."""

    def __init__(self, columns: Sequence[Lookup], links: Sequence[str]) -> None:
        self.columns = list(columns)
        self.links = list(links)
        self.sizes = [len(c.texts_cached()) for c in self.columns]
        self._slots: np.ndarray | None = None  # combination -> number, -1: not met yet
        self._combos: list[int] = []  # combination of each number
        self._table: dict[tuple[str, str], pa.Array] = {}  # (prefix, suffix) -> texts

    def __call__(self, idx: Any, n: int) -> list[Any]:
        raise TypeError("a run of columns has no single value")

    def _code(self, idx: Any, n: int) -> np.ndarray | None:
        code: np.ndarray | None = None
        for column, size in zip(self.columns, self.sizes, strict=True):
            index = column.lookup(idx, n)
            if index is None or (len(index) and (index.min() < 0 or index.max() >= size)):
                return None
            code = index if code is None else code * size + index
        return code

    def _text(self, combo: int) -> str:
        positions = []
        for size in reversed(self.sizes):
            combo, k = divmod(combo, size)
            positions.append(k)
        parts = []
        for k, (column, pos) in enumerate(zip(self.columns, reversed(positions), strict=True)):
            if k:
                parts.append(self.links[k - 1])
            parts.append(column.texts_cached()[pos])
        return "".join(parts)

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        code = self._code(idx, n)
        if code is None:  # a value outside a column's table: each column on its own
            pieces: Pieces = []
            for k, column in enumerate(self.columns):
                before = prefix if k == 0 else self.links[k - 1]
                after = suffix if k == len(self.columns) - 1 else ""
                pieces += column.pieces(idx, n, before, after)
            return pieces
        if self._slots is None:
            self._slots = np.full(int(np.prod(self.sizes)), -1, dtype=np.int32)
        numbers = self._slots[code]
        new = numbers < 0
        if new.any():  # number the new combinations and add their texts to the tables
            fresh = np.unique(code[new])
            self._slots[fresh] = np.arange(len(self._combos), len(self._combos) + len(fresh))
            self._combos.extend(fresh.tolist())
            texts = [self._text(c) for c in fresh.tolist()]
            for (before, after), table in self._table.items():
                added = pa.array([before + t + after for t in texts], type=pa.string())
                self._table[(before, after)] = pa.concat_arrays([table, added])
            numbers = self._slots[code]
        table = self._table.get((prefix, suffix))
        if table is None:
            table = self._table[(prefix, suffix)] = pa.array(
                [prefix + self._text(c) + suffix for c in self._combos], type=pa.string()
            )
        return [take_text(table, numbers)]

    def texts(self) -> list[str]:  # not a column of a run itself
        raise TypeError("a run of columns is not part of another run")


class TaggedNumberColumn:
    """`prefixes[code] + f"{number:0{width}d}"`, or None where the prefix is None (reservation
    numbers, vouchers)."""

    folds = (True, True)

    def __init__(
        self, codes: np.ndarray, prefixes: Sequence[str | None], numbers: np.ndarray, width: int
    ) -> None:
        self.codes = codes
        self.prefixes = list(prefixes)
        self.numbers = numbers
        self.width = width
        # the JSON of each prefix without its closing quote; None -> null
        self._open = Tables(
            lambda: ["null" if p is None else dumps_text(p)[:-1] for p in self.prefixes]
        )
        self._null = np.array([p is None for p in self.prefixes])

    def __call__(self, idx: Any, n: int) -> list[str | None]:
        prefixes, w = self.prefixes, self.width
        return [
            None if (p := prefixes[c]) is None else f"{p}{b:0{w}d}"
            for c, b in zip(self.codes[idx].tolist(), self.numbers[idx].tolist(), strict=True)
        ]

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        numbers = self.numbers[idx].astype(np.int64)
        codes = self.codes[idx].astype(np.int64)
        top = 10**self.width
        if len(numbers) and (int(numbers.min()) < 0 or (self.width and int(numbers.max()) >= top)):
            return [prefix, values_json(self(idx, n)), suffix]
        null = self._null[codes]
        head = take_text(self._open.get(prefix), codes)
        if self.width == 8:  # two groups of four digits from tables
            hi, lo = np.divmod(numbers, 10**4)
            if null.any():
                hi[null] = 10**4
                lo[null] = 10**4
            return [
                head,
                take_text(DIGITS4.get(), hi),
                take_text(DIGITS4_CLOSE.get("", suffix), lo),
            ]
        digits = decimal_text(numbers)
        if isinstance(digits, Numbers) and (self.width > 1 or null.any()):
            digits = digits.array()  # Arrow's kernels below take an array
        if self.width > 1:
            digits = pc.utf8_lpad(digits, self.width, "0")
        closing = '"' + suffix
        if null.any():
            digits = pc.if_else(pa.array(null), "", digits)
            return [head, digits, take_text(pa.array([closing, suffix]), null.view(np.int8))]
        return [head, digits, closing]


class ComposedColumn:
    """A text value put together from parts (e-mail addresses, addresses, ...): `get` gives the
    values for the dict path; `parts` the same text as JSON pieces: a `str` is literal JSON
    text, `(codes, texts)` takes JSON-escaped texts by code, an int array gives its decimals."""

    def __init__(
        self, get: Getter, parts: Sequence[str | tuple[np.ndarray, Sequence[str]] | np.ndarray]
    ) -> None:
        self.get = get
        self.parts: list[Any] = []
        for part in parts:
            if isinstance(part, tuple):
                texts = list(part[1])
                self.parts.append((part[0], Tables(lambda texts=texts: texts)))
            else:
                self.parts.append(part)
        ends = (self.parts[0], self.parts[-1]) if self.parts else ("", "")
        self.folds = tuple(not isinstance(p, np.ndarray) for p in ends)

    def __call__(self, idx: Any, n: int) -> list[Any]:
        return self.get(idx, n)

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        out: Pieces = []
        last = len(self.parts) - 1
        for k, part in enumerate(self.parts):
            before = prefix if k == 0 else ""
            after = suffix if k == last else ""
            if isinstance(part, str):
                out.append(before + part + after)
            elif isinstance(part, tuple):
                out.append(take_text(part[1].get(before, after), part[0][idx].astype(np.int64)))
            else:
                out += [before, decimal_text(part[idx]), after]
        return out


class ConstColumn:
    folds = (True, True)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self, idx: Any, n: int) -> list[Any]:
        return [self.value] * n

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        return [prefix + dumps_text(self.value) + suffix]
