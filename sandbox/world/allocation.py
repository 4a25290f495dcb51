"""The contract's allocation of a bill line's cents over its nights (integer cents, the first r
nights get the extra cent), for the ground truth (docs/contracts.md section 1)."""

from __future__ import annotations

import numpy as np


def allocate(total: int, first: int, nights: int) -> list[tuple[int, int]]:
    """The contract's allocation of `total` cents over `nights` nights from ordinal `first`."""
    sign = 1 if total >= 0 else -1
    base = sign * (abs(total) // nights)
    r = abs(total) - abs(base) * nights
    return [(first + k, base + (sign if k < r else 0)) for k in range(nights)]


def allocate_many(
    totals: np.ndarray, nights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`allocate` for many lines at once: per night, the line's index, the night's offset from
    the line's first night and its cents."""
    tot = np.asarray(totals, dtype=np.int64)
    n = np.asarray(nights, dtype=np.int64)
    sign = np.where(tot >= 0, 1, -1)
    base = sign * (np.abs(tot) // n)
    rem = np.abs(tot) - np.abs(base) * n
    rep = np.repeat(np.arange(len(n)), n)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(n) - n, n)
    return rep, offs, base[rep] + np.where(offs < rem[rep], sign[rep], 0)
