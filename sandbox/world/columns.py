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
from datetime import date
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from .clock import _DATE_STR, dstr

Piece = str | pa.Array
Pieces = list[Piece]
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
_TAKE = pc.get_function("array_take")
_CAST = pc.get_function("cast")
_TO_STRING = pc.CastOptions.safe(pa.string())
_JOIN = pc.get_function("binary_join_element_wise")
_COALESCE = pc.get_function("coalesce")
_NO_SEPARATOR = pa.scalar("", type=pa.string())
_SCALARS: dict[str, pa.Scalar] = {}


def dumps_text(value: Any) -> str:
    """orjson's text of one value (orjson writes UTF-8, so this decodes losslessly)."""
    return orjson.dumps(value).decode()


def json_inner(text: str) -> str:
    """JSON text of a string without its quotes (for pieces of a composed value)."""
    return dumps_text(text)[1:-1]


def take_text(table: pa.Array, index: np.ndarray) -> pa.Array:
    """`table[index]` (an array of positions, bounds-checked: ArrowIndexError)."""
    return _TAKE.call([table, pa.array(index, type=pa.int64())])


def decimal_text(values: np.ndarray) -> pa.Array:
    return _CAST.call([pa.array(values)], _TO_STRING)


def values_json(values: Sequence[Any]) -> pa.Array:
    """The generic path: each value through orjson."""
    return pa.array([orjson.dumps(v) for v in values], type=pa.binary()).cast(pa.string())


def _scalar(text: str) -> pa.Scalar:
    found = _SCALARS.get(text)
    if found is None:
        if len(_SCALARS) > 4096:  # literals are a few per block: this never grows far
            _SCALARS.clear()
        found = _SCALARS[text] = pa.scalar(text, type=pa.string())
    return found


def _span(
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


def _positions(idx: Any, n: int) -> np.ndarray:
    if isinstance(idx, slice):
        return np.arange(idx.start, idx.start + n, dtype=np.int64)
    return np.asarray(idx, dtype=np.int64)


class _Tables:
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


_DIGITS4 = _Tables(lambda: [f"{k:04d}" for k in range(10**4)] + [""])  # "" for a null
_DIGITS4_CLOSE = _Tables(lambda: [f'{k:04d}"' for k in range(10**4)], bare=True)
_CENTS = _Tables(
    lambda: [
        ".0" if f == 0 else (f".{f // 10}" if f % 10 == 0 else f".{f:02d}") for f in range(100)
    ]
)
_SIGN = _Tables(lambda: ["", "-"])
_SECONDS = _Tables(
    lambda: [f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(86400)] + [""]
)
_MILLIS = _Tables(lambda: [f'.{m:03d}"' for m in range(1000)], bare=True)


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
        text = _CAST.call([masked], _TO_STRING)
        text = _COALESCE.call([text, _scalar("null")])
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


class Lookup:
    """A column whose JSON texts come from a table: `lookup(idx, n)` gives each row's position
    in `texts()` (None when a value is outside the table), and its pieces are one take from the
    table with the prefix and the suffix folded in."""

    folds = (True, True)

    def texts(self) -> list[str]:
        raise NotImplementedError

    def lookup(self, idx: Any, n: int) -> np.ndarray | None:
        raise NotImplementedError

    def _tables(self) -> _Tables:
        tables = self.__dict__.get("_text_tables")
        if tables is None:
            tables = self.__dict__["_text_tables"] = _Tables(self.texts)
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
                lo, hi = _span(a, (a != NULL) if self.nullable else None)
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
        return int_pieces(_positions(idx, n) + self.base, prefix, suffix)


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


class DateColumn(Lookup):
    """Day ordinals; 0 is None. ISO strings from `dstr`'s cache, looked up inline."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self._range: tuple[int, int] | None = None

    def __call__(self, idx: Any, n: int) -> list[str | None]:
        vals = self.a[idx].tolist()
        cache = _DATE_STR
        try:
            return [cache[o] if o else None for o in vals]
        except KeyError:  # a day not rendered yet: fill the cache, then look up again
            for o in set(vals):
                if o:
                    dstr(o)
            return [cache[o] if o else None for o in vals]

    def _days(self) -> tuple[int, int]:
        if self._range is None:
            lo, hi = _span(self.a, self.a != 0, empty=(1, 0))
            self._range = (lo, hi) if lo >= 1 and hi - lo <= MAX_TABLE_DAYS else (1, 0)
        return self._range

    def texts(self) -> list[str]:
        lo, hi = self._days()
        return [f'"{dstr(o)}"' for o in range(lo, hi + 1)] + ["null"]

    def lookup(self, idx: Any, n: int) -> np.ndarray:
        lo, hi = self._days()
        v = self.a[idx]
        index = v.astype(np.int64) - lo
        index[v == 0] = hi - lo + 1
        return index


class DatetimeColumn:
    """Milliseconds since 1970-01-01 (UTC), rendered as `dtstr` does; negative is None."""

    folds = (True, True)

    def __init__(self, a: np.ndarray) -> None:
        self.a = a
        self._lo = 0  # first day of the day table
        self._days: _Tables | None = None

    @staticmethod
    def _text(v: np.ndarray) -> np.ndarray:
        return np.datetime_as_string(v.astype("datetime64[ms]"), unit="ms")

    def __call__(self, idx: Any, n: int) -> list[str | None]:
        v = self.a[idx]
        out = self._text(v).tolist()
        if (v < 0).any():
            out = [None if x < 0 else s for x, s in zip(v.tolist(), out, strict=True)]
        return out

    def _day_tables(self) -> _Tables:
        if self._days is None:
            lo, hi = _span(self.a, self.a >= 0)
            lo, hi = lo // DAY_MS, hi // DAY_MS
            if hi + EPOCH_ORD > date.max.toordinal() or hi - lo > MAX_TABLE_DAYS:
                lo, hi = 0, -1  # (beyond year 9999 numpy writes more digits): value by value
            self._lo = lo
            self._days = _Tables(
                lambda: (
                    [f'"{date.fromordinal(EPOCH_ORD + d).isoformat()}T' for d in range(lo, hi + 1)]
                    + ["null"]
                )
            )
        return self._days

    def pieces(self, idx: Any, n: int, prefix: str, suffix: str) -> Pieces:
        """`"yyyy-mm-ddT` + `HH:MM:SS` + `.mmm"` from three tables (null: `null`, ``, ``)."""
        v = self.a[idx].astype(np.int64)
        days = self._day_tables().get(prefix)
        null = v < 0
        day, ms = np.divmod(v, DAY_MS)
        day -= self._lo
        seconds, millis = np.divmod(ms, 1000)
        if null.any():
            day[null] = len(days) - 1
            seconds[null] = 86400
            millis[null] = 1000
        try:
            return [
                take_text(days, day),
                take_text(_SECONDS.get(), seconds),
                take_text(_MILLIS.get("", suffix), millis),
            ]
        except pa.ArrowIndexError:  # a day outside the column's range
            return [prefix, values_json(self(idx, n)), suffix]


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
        self._open = _Tables(
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
                take_text(_DIGITS4.get(), hi),
                take_text(_DIGITS4_CLOSE.get("", suffix), lo),
            ]
        digits = decimal_text(numbers)
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
                self.parts.append((part[0], _Tables(lambda texts=texts: texts)))
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


class RowPlan:
    """How to write the JSON object of a row from the columns: the columns' pieces with the
    literal text between them (keys, constants, braces) folded into a neighbour that takes it
    (`folds`). Vocabulary columns over the same codes become one lookup (`FusedVocab`), and
    adjacent lookups one run (`LookupRun`)."""

    def __init__(self, fields: Sequence[str], getters: Sequence[Getter], *, close: bool) -> None:
        # the row as alternating literal text and columns: lits[k] comes before cols[k]
        cols: list[Any] = []
        lits: list[str] = ["{"]
        k = 0
        while k < len(fields):
            getter = getters[k]
            key = ("," if k else "") + dumps_text(fields[k]) + ":"
            k += 1
            if isinstance(getter, ConstColumn):
                lits[-1] += key + dumps_text(getter.value)
                continue
            lits[-1] += key
            if isinstance(getter, VocabColumn):  # vocabularies over the same codes
                run, links, link, j = [getter], [], "", k
                while j < len(fields):
                    nxt = getters[j]
                    nxt_key = "," + dumps_text(fields[j]) + ":"
                    if isinstance(nxt, ConstColumn):
                        link += nxt_key + dumps_text(nxt.value)
                    elif isinstance(nxt, VocabColumn) and nxt.codes is getter.codes:
                        run.append(nxt)
                        links.append(link + nxt_key)
                        link, k = "", j + 1
                    else:
                        break
                    j += 1
                if len(run) > 1:
                    getter = FusedVocab(run, links)
            cols.append(getter)
            lits.append("")
        lits[-1] += "}" if close else ""
        cols, lits = self._runs(cols, lits)
        # each literal goes into the column after it or before it if one takes it, else it is
        # a piece of its own (between two columns that write numbers, say)
        self.steps: list[list[Any]] = [[c, "", ""] for c in cols]  # column, prefix, suffix
        self.head = ""  # a literal piece before everything (when the first column takes none)
        for i, text in enumerate(lits):
            after = self.steps[i] if i < len(cols) else None
            before = self.steps[i - 1] if i > 0 else None
            if after is not None and folds(after[0])[0]:
                after[1] = text
            elif before is not None and folds(before[0])[1]:
                before[2] = text
            elif after is not None:
                after[1] = text  # a piece of its own, just before the column
            elif before is not None:
                before[2] = text
            else:
                self.head = text  # no columns at all
        self.lead_folds = bool(self.steps) and folds(self.steps[0][0])[0]

    @staticmethod
    def _runs(cols: list[Any], lits: list[str]) -> tuple[list[Any], list[str]]:
        """Merge adjacent lookups into runs while their combinations fit."""
        out_cols: list[Any] = []
        out_lits: list[str] = [lits[0]]
        i = 0
        while i < len(cols):
            run, links, size = [cols[i]], [], 1
            if isinstance(cols[i], Lookup) and folds(cols[i])[0]:
                size = len(cols[i].texts_cached())
                j = i + 1
                while j < len(cols) and isinstance(cols[j], Lookup) and folds(cols[j])[0]:
                    nxt = len(cols[j].texts_cached())
                    if size * nxt > MAX_COMBINATIONS:
                        break
                    run.append(cols[j])
                    links.append(lits[j])
                    size *= nxt
                    j += 1
            out_cols.append(run[0] if len(run) == 1 else LookupRun(run, links))
            i += len(run)
            out_lits.append(lits[i])
        return out_cols, out_lits

    def encode(self, idx: Any, n: int, first: np.ndarray | None = None) -> pa.Array:
        """The text of the rows at positions `idx` (a string array of `n` rows). With `first`
        (a bool per row), a row that is not first of its group starts with `,`."""
        pieces: Pieces = [self.head]
        for k, (column, prefix, suffix) in enumerate(self.steps):
            if k == 0 and first is not None:
                if self.lead_folds:
                    pieces.append(take_text(_COMMAS.get(), first.view(np.int8)))
                else:  # the comma joins the literal before the first column
                    pieces.append(take_text(_COMMAS.get("", prefix), first.view(np.int8)))
                    prefix = ""
            pieces.extend(json_pieces(column, idx, n, prefix, suffix))
        if not self.steps and first is not None:
            pieces.insert(0, take_text(_COMMAS.get(), first.view(np.int8)))
        return join_pieces(pieces, n)


_COMMAS = _Tables(lambda: [",", ""])  # before a row that is not / is the first of its group


def join_pieces(pieces: Pieces, n: int) -> pa.Array:
    """Concatenate pieces row by row into one string array of `n` rows."""
    merged: Pieces = []
    for piece in pieces:
        if isinstance(piece, str):
            if not piece:
                continue
            if merged and isinstance(merged[-1], str):
                merged[-1] += piece
                continue
        merged.append(piece)
    if not any(isinstance(p, pa.Array) for p in merged):
        return pa.array(["".join(merged)] * n, type=pa.string())  # type: ignore[arg-type]
    if len(merged) == 1:
        return merged[0]  # type: ignore[return-value]
    args = [_scalar(p) if isinstance(p, str) else p for p in merged]
    return _JOIN.call([*args, _NO_SEPARATOR])


def to_bytes(rows: pa.Array) -> list[bytes]:
    """Python bytes of a string array (each sized to its content)."""
    return rows.cast(pa.binary()).to_pylist()


class Encoded(list[bytes]):
    """Encoded records, each a bytes object sized to its content (from a string array): a cache
    may keep them as they are (`exact`), where orjson's results need a copy."""

    exact = True

    @classmethod
    def of(cls, rows: pa.Array) -> Encoded:
        return cls(to_bytes(rows))


__all__ = [
    "NULL",
    "CentsColumn",
    "ComposedColumn",
    "ConstColumn",
    "DateColumn",
    "DatetimeColumn",
    "Encoded",
    "Getter",
    "IntColumn",
    "KeyColumn",
    "Lookup",
    "LookupRun",
    "Pieces",
    "RowPlan",
    "TaggedNumberColumn",
    "VocabColumn",
    "cents_pieces",
    "decimal_text",
    "int_pieces",
    "join_pieces",
    "json_inner",
    "json_pieces",
    "take_text",
    "to_bytes",
    "values_json",
]
