"""Column converters: a list of wire values -> a typed Arrow array plus a mask of bad values.

Each converter tries one vectorised Arrow conversion first (the clean case, which is nearly every
page) and only on failure falls back to pandas coercion (`to_numeric`/`to_datetime` with
`errors="coerce"`); a value that was present but came out null is bad. Money is parsed from the
JSON number exactly: Arrow's float64 -> decimal128(18, 2) cast rounds the double's exact binary
value to the nearest cent, which for every number with at most two decimals is the number itself,
i.e. the same as `Decimal(repr(x)).quantize(Decimal("0.01"))`; no arithmetic touches the value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lake.schema import MONEY, TIMESTAMP

EXACT_INT_LIMIT = 2.0**53  # larger integers are not exact after a trip through JSON doubles
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MONEY_LIMIT = 1e15  # decimal128(18, 2) holds 16 integer digits; keep a margin below it
_ARROW_ERRORS = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    TypeError,
    ValueError,
    OverflowError,
)

Converted = tuple[pa.Array, np.ndarray | None, str]
Values = Sequence[Any]


def _present(values: Values) -> np.ndarray:
    return np.fromiter((v is not None for v in values), dtype=bool, count=len(values))


def _numbers(values: Values) -> tuple[np.ndarray, np.ndarray]:
    """float64 values and a mask of values that were present but not numbers (pandas coerce)."""
    series = pd.Series(values, dtype=object)
    is_bool = np.fromiter((isinstance(v, bool) for v in values), dtype=bool, count=len(values))
    nums = pd.to_numeric(series.mask(is_bool), errors="coerce").to_numpy(
        dtype="float64", na_value=np.nan
    )
    bad = _present(values) & ~np.isfinite(nums)
    return nums, bad


def ints_from_floats(nums: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """float64 -> int64 where the value is a whole number below 2**53 (exact in a double)."""
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(nums) & (np.floor(nums) == nums) & (np.abs(nums) < EXACT_INT_LIMIT)
    bad = ~np.isnan(nums) & ~ok
    return pa.array(np.where(ok, nums, 0).astype(np.int64), mask=~ok), bad


def to_int(values: Values) -> Converted:
    # Inference, not `type=int64`: Arrow would silently truncate 2.5 to 2.
    try:
        arr = pa.array(values)
    except _ARROW_ERRORS:
        arr = None
    if arr is not None and arr.type in (pa.int64(), pa.null()):
        return arr.cast(pa.int64()), None, "not an integer"
    if arr is not None and arr.type == pa.float64():
        ints, bad = ints_from_floats(arr.to_numpy(zero_copy_only=False))
        return ints, bad, "not an integer"
    nums, bad = _numbers(values)
    ints, not_whole = ints_from_floats(nums)
    # A page that mixes integers with other values: its Python integers stay exact (through a
    # double, one above 2**53 would be taken for a bad value, as it is not in a page of ints)
    exact = np.fromiter(
        (type(v) is int and INT64_MIN <= v <= INT64_MAX for v in values),
        dtype=bool,
        count=len(values),
    )
    if exact.any():
        whole = ints.to_pylist()
        kept = [v if e else w for v, e, w in zip(values, exact, whole, strict=True)]
        return pa.array(kept, type=pa.int64()), (bad | not_whole) & ~exact, "not an integer"
    return ints, bad | not_whole, "not an integer"


def _floats(values: Values) -> tuple[pa.Array, np.ndarray | None]:
    # Inference first: `type=float64` would take True as 1.0.
    try:
        arr = pa.array(values)
        if arr.type in (pa.float64(), pa.int64(), pa.null()):
            return arr.cast(pa.float64()), None
    except _ARROW_ERRORS:
        pass
    nums, bad = _numbers(values)
    return pa.array(nums, mask=~np.isfinite(nums)), bad


def to_float(values: Values) -> Converted:
    arr, bad = _floats(values)
    return arr, bad, "not a number"


def to_money(values: Values) -> Converted:
    arr, bad = _floats(values)
    return _money(arr, bad)


def _money(arr: pa.Array, bad: np.ndarray | None) -> Converted:
    if all_below(arr, MONEY_LIMIT):  # the clean case, one vectorised pass
        return pc.cast(arr, MONEY), bad, "not an amount"
    too_big = pc.fill_null(pc.greater_equal(pc.abs(arr), MONEY_LIMIT), False)
    if pc.any(too_big).as_py():
        over = too_big.to_numpy(zero_copy_only=False)
        bad = over if bad is None else bad | over
        arr = pc.if_else(too_big, pa.scalar(None, pa.float64()), arr)
    return pc.cast(arr, MONEY), bad, "not an amount"


def all_below(arr: pa.Array, limit: float) -> bool:
    """Whether every value of a float64 column is below `limit` in size (no NaN: it compares
    false). Through numpy, without a copy where the column has no null."""
    if arr.null_count:
        arr = arr.drop_null()
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(arr.to_numpy()) < limit))


def _strings_only(values: Values) -> tuple[list[Any], np.ndarray]:
    bad = np.fromiter(
        (v is not None and not isinstance(v, str) for v in values), dtype=bool, count=len(values)
    )
    return [None if b else v for v, b in zip(values, bad, strict=True)], bad


def to_date(values: Values) -> Converted:
    try:
        return pc.cast(pa.array(values, type=pa.string()), pa.date32()), None, "bad date"
    except _ARROW_ERRORS:
        pass
    clean, bad = _strings_only(values)
    parsed = pd.to_datetime(pd.Series(clean, dtype=object), format="%Y-%m-%d", errors="coerce")
    bad |= _present(clean) & parsed.isna().to_numpy()
    return pa.array(parsed, from_pandas=True).cast(pa.date32()), bad, "bad date"


def to_datetime(values: Values) -> Converted:
    """The service sends `yyyy-MM-ddTHH:mm:ss.SSS` without offset, meaning UTC."""
    try:
        naive = pc.cast(pa.array(values, type=pa.string()), pa.timestamp("ms"))
        return naive.cast(TIMESTAMP), None, "bad datetime"
    except _ARROW_ERRORS:
        pass
    clean, bad = _strings_only(values)
    parsed = pd.to_datetime(
        pd.Series(clean, dtype=object), format="ISO8601", errors="coerce", utc=True
    )
    bad |= _present(clean) & parsed.isna().to_numpy()
    arr = pa.array(parsed, from_pandas=True)
    return pc.cast(arr, TIMESTAMP, safe=False), bad, "bad datetime"


def to_str(values: Values) -> Converted:
    try:
        return pa.array(values, type=pa.string()), None, "not text"
    except _ARROW_ERRORS:
        pass
    # Numbers where text is expected are harmless (codes like "0042" aside); objects are not.
    bad = np.zeros(len(values), dtype=bool)
    out: list[str | None] = []
    for i, v in enumerate(values):
        if v is None or isinstance(v, str):
            out.append(v)
        elif isinstance(v, bool):
            out.append("true" if v else "false")
        elif isinstance(v, int | float):
            out.append(str(v))
        else:
            bad[i] = True
            out.append(None)
    return pa.array(out, type=pa.string()), bad, "not text"


def to_bool(values: Values) -> Converted:
    try:
        if all(v is None or isinstance(v, bool) for v in values):
            return pa.array(values, type=pa.bool_()), None, "not a boolean"
    except _ARROW_ERRORS:
        pass
    words = {"true": True, "false": False}
    out = [
        v if isinstance(v, bool) else words.get(str(v).lower()) if v is not None else None
        for v in values
    ]
    bad = _present(values) & ~_present(out)
    return pa.array(out, type=pa.bool_()), bad, "not a boolean"


def _list_of(item_type: pa.DataType, ok: Callable[[Any], bool]) -> Callable[[Values], Converted]:
    list_type = pa.list_(item_type)

    def convert(values: Values) -> Converted:
        # Only JSON arrays: Arrow would also take the string "MON" as ["M", "O", "N"].
        if all(v is None or type(v) is list for v in values):
            try:
                return pa.array(values, type=list_type), None, "not a list"
            except _ARROW_ERRORS:
                pass
        good = [v is None or (isinstance(v, list) and all(ok(x) for x in v)) for v in values]
        bad = ~np.array(good, dtype=bool)
        return (
            pa.array([v if g else None for v, g in zip(values, good, strict=True)], type=list_type),
            bad,
            "not a list",
        )

    return convert


def to_translation(values: Values) -> Converted:
    """`translations: [{language, name, ...}]` -> the `en` name, else the first one."""
    out: list[str | None] = []
    bad = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if v is None:
            out.append(None)
            continue
        if not isinstance(v, list) or not all(isinstance(t, dict) for t in v):
            bad[i] = True
            out.append(None)
            continue
        name = next((t.get("name") for t in v if t.get("language") == "en"), None)
        if name is None and v:
            name = v[0].get("name")
        out.append(name if isinstance(name, str) else None)
    return pa.array(out, type=pa.string()), bad, "bad translations"


CONVERTERS: dict[str, Callable[[Values], Converted]] = {
    "id": to_int,
    "int": to_int,
    "float": to_float,
    "money": to_money,
    "date": to_date,
    "datetime": to_datetime,
    "str": to_str,
    "bool": to_bool,
    "int_list": _list_of(pa.int64(), lambda x: isinstance(x, int) and not isinstance(x, bool)),
    "str_list": _list_of(pa.string(), lambda x: isinstance(x, str)),
    "translation": to_translation,
}


def from_wire(kind: str, arr: pa.Array) -> Converted | None:
    """Finish a column the typed read made an Arrow array (`assets.typed`: integers as int64,
    amounts as float64, dates as text or already parsed); None means "use the per-value
    converter"."""
    if kind in ("id", "int"):
        return arr, None, "not an integer"
    if kind == "money":
        return _money(arr, None)
    if kind in ("date", "datetime"):
        if arr.type in (pa.date32(), TIMESTAMP):  # parsed by the extension (assets.compiled)
            return arr, None, f"bad {kind}"
        target = pa.date32() if kind == "date" else pa.timestamp("ms")
        try:
            out = pc.cast(arr, target)
        except _ARROW_ERRORS:
            return None
        return (out if kind == "date" else out.cast(TIMESTAMP)), None, f"bad {kind}"
    return arr, None, ""
