"""Date and datetime columns: ISO text written from day ordinals and epoch milliseconds."""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np
import pyarrow as pa

from sandbox.world.columns import Lookup
from sandbox.world.pieces import (
    DAY_MS,
    EPOCH_ORD,
    MAX_TABLE_DAYS,
    MILLIS,
    SECONDS,
    Pieces,
    Tables,
    span,
    take_text,
    values_json,
)

from .clock import _DATE_STR, dstr


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
            lo, hi = span(self.a, self.a != 0, empty=(1, 0))
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
        self._days: Tables | None = None

    @staticmethod
    def _text(v: np.ndarray) -> np.ndarray:
        return np.datetime_as_string(v.astype("datetime64[ms]"), unit="ms")

    def __call__(self, idx: Any, n: int) -> list[str | None]:
        v = self.a[idx]
        out = self._text(v).tolist()
        if (v < 0).any():
            out = [None if x < 0 else s for x, s in zip(v.tolist(), out, strict=True)]
        return out

    def _day_tables(self) -> Tables:
        if self._days is None:
            lo, hi = span(self.a, self.a >= 0)
            lo, hi = lo // DAY_MS, hi // DAY_MS
            if hi + EPOCH_ORD > date.max.toordinal() or hi - lo > MAX_TABLE_DAYS:
                lo, hi = 0, -1  # (beyond year 9999 numpy writes more digits): value by value
            self._lo = lo
            self._days = Tables(
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
                take_text(SECONDS.get(), seconds),
                take_text(MILLIS.get("", suffix), millis),
            ]
        except pa.ArrowIndexError:  # a day outside the column's range
            return [prefix, values_json(self(idx, n)), suffix]
