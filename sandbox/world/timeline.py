"""The timeline of the generated history: every stay of the world's past and near future, as columns."""

from __future__ import annotations

import math
from datetime import date

import numpy as np

from sandbox.world.seasons import (
    CH_MIX,
    DUR_FRI,
    DUR_MON,
    DUR_OTHER,
    _season_target,
)


class TimelineMixin:
    """The timeline of the generated history: every stay of the world's past and near future, as columns."""

    def _timeline(self, gen_end: int) -> dict[str, np.ndarray]:
        rng = self.rng
        n_days = gen_end - self.ord0
        target = np.array([_season_target(self.ord0 + i) for i in range(n_days)])
        unit, arr, dur = self._stay_walks(target, gen_end)
        n = len(unit)
        tidx = self.unit_type[unit]
        kind = np.array([ti.kind for ti in self.types])[tidx]
        cap = np.array([self.types[int(i)].persons for i in range(len(self.types))])[tidx]
        pets_ok = np.array([self.types[int(i)].pets for i in range(len(self.types))])[tidx]
        cur = np.array([self.types[int(i)].currency == "GBP" for i in range(len(self.types))])[tidx]
        # category: owners use "their" units (every 7th chalet or lodge), blocks anywhere
        owned = ((unit % 7) == 0) & np.isin(kind, ["CHALET", "LODGE"])
        u = rng.random(n)
        cat = np.zeros(n, dtype=np.int64)
        cat[(kind == "LODGE") & (u < 0.10)] = 1
        cat[owned & (u >= 0.10) & (u < 0.25)] = 2
        cat[(u >= 0.975) & (u < 0.99)] = 3
        # channels
        ch = np.where(
            cur,
            rng.choice(5, size=n, p=CH_MIX["GBP"]),
            rng.choice(5, size=n, p=CH_MIX["EUR"]),
        )
        ch[cat >= 2] = np.where(cur[cat >= 2], 2, 1)
        # lead time (days): long for summer and Christmas, short for owners and blocks
        high = np.isin(_months(arr), [7, 8, 12])
        lead = np.exp(rng.normal(math.log(38), 1.05, n)) * np.where(high, 1.7, 1.0)
        lead = np.where(cat >= 2, rng.uniform(1, 60, n), lead)
        lead = np.minimum(lead, 420).astype(np.int64)
        hour = rng.uniform(7, 23.5, n)
        hour = np.where(lead == 0, rng.uniform(6, 13.5, n), hour)
        restime = (arr - lead - self.ord0) * 24.0 + hour  # hours after ord0 midnight
        # party
        adults = np.minimum(rng.integers(1, 5, n), cap)
        adults = np.where(rng.random(n) < 0.7, np.minimum(2, cap), adults)
        room = cap - adults
        children = np.minimum(room, np.where(rng.random(n) < 0.45, rng.integers(1, 4, n), 0))
        babies = np.where((cap - adults - children > 0) & (rng.random(n) < 0.06), 1, 0)
        pets = np.where(pets_ok & (rng.random(n) < 0.12), rng.integers(1, 3, n), 0)
        linen = rng.random(n) < 0.5
        cleaning = rng.random(n) < 0.7
        direct = np.isin(ch, [0, 1, 2])
        discount = np.where(direct & (lead >= 120) & (cat <= 1) & (rng.random(n) < 0.5), 10, 0)
        paying = direct & (cat <= 1) & (rng.random(n) < 0.03)
        st = rng.random(n)
        order = np.argsort(restime, kind="stable")
        cols = {
            "unit": unit,
            "arr": arr,
            "dur": dur,
            "cat": cat,
            "ch": ch,
            "restime": restime,
            "adults": adults,
            "children": children,
            "babies": babies,
            "pets": pets,
            "linen": linen,
            "cleaning": cleaning,
            "discount": discount,
            "paying": paying,
            "st": st,
            "lead": lead,
        }
        dtypes = {  # compact: a large world keeps ~1.1M of these for its whole life
            "unit": np.int32,
            "arr": np.int32,
            "dur": np.int16,
            "cat": np.int8,
            "ch": np.int8,
            "adults": np.int8,
            "children": np.int8,
            "babies": np.int8,
            "pets": np.int8,
            "discount": np.int8,
            "lead": np.int16,
        }
        return {k: v[order].astype(dtypes.get(k, v.dtype)) for k, v in cols.items()}

    def _stay_walks(
        self, target: np.ndarray, gen_end: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each unit's stays, one after the other from its setup (or the history's start) to its
        archiving (or `gen_end`): a gap drawn from the night's target occupancy, an arrival moved
        to a Monday or Friday (85 %), a duration by the arrival's weekday; at most 700 draws per
        unit. The units walk side by side, a draw at a time, from the same random numbers a walk
        of one unit after the other takes (4 x 700 per unit, in unit order): (unit, arrival,
        nights) by unit, then arrival."""
        n_units = len(self.unit_ids)
        tidx = np.asarray(self.unit_type[:n_units], dtype=np.int64)
        pitch = np.array([ti.kind == "CAMPING_PITCH" for ti in self.types], dtype=bool)[tidx]
        winter = np.isin(_months(np.arange(self.ord0, gen_end)), [11, 12, 1, 2, 3])
        start = np.maximum(self.ord0, np.asarray(self.unit_setup[:n_units], dtype=np.int64))
        stop = np.minimum(gen_end, np.asarray(self.unit_arch[:n_units], dtype=np.int64))
        tables = [_cumulative(t) for t in (DUR_MON, DUR_FRI, DUR_OTHER)]
        found: list[tuple[np.ndarray, ...]] = []
        for lo in range(0, n_units, _WALK_UNITS):
            hi = min(lo + _WALK_UNITS, n_units)
            draws = self.rng.random((hi - lo, 4, _DRAWS))
            c = start[lo:hi].copy()
            end = stop[lo:hi]
            live = np.flatnonzero(c < end)
            for k in range(_DRAWS):
                if not len(live):
                    break
                at = c[live]
                p = target[at - self.ord0]
                p = np.where(pitch[lo + live] & winter[at - self.ord0], p * 0.4, p)
                gap = _gaps(draws[live, 0, k], p)
                a = at + gap
                wd = (a + 6) % 7
                a = np.where(draws[live, 1, k] < 0.85, a + _TO_MON_OR_FRI[wd], a)
                wd = (a + 6) % 7
                d = np.where(
                    wd == 0,
                    _pick_many(tables[0], draws[live, 2, k]),
                    np.where(
                        wd == 4,
                        _pick_many(tables[1], draws[live, 2, k]),
                        _pick_many(tables[2], draws[live, 2, k]),
                    ),
                )
                fits = a + d <= end[live]
                kept = live[fits]
                found.append((lo + kept, a[fits], d[fits], np.full(len(kept), k)))
                c[kept] = a[fits] + d[fits]
                live = kept[c[kept] < end[kept]]
        if not found:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        unit, arr, dur, step = (
            np.concatenate(col).astype(np.int64) for col in zip(*found, strict=True)
        )
        order = np.lexsort((step, unit))
        return unit[order], arr[order], dur[order]


_WALK_UNITS = 2_000  # units walked side by side (their draws: 2,000 x 4 x 700 doubles, 45 MB)
_DRAWS = 700  # draws per unit
# days from a weekday (Monday = 0) to the next Monday or Friday, itself included
_TO_MON_OR_FRI = np.array([0, 3, 2, 1, 0, 2, 1], dtype=np.int64)


def _months(ordinals: np.ndarray) -> np.ndarray:
    """The calendar month of each day ordinal."""
    if not len(ordinals):
        return np.zeros(0, dtype=np.int64)
    first = int(ordinals.min())
    months = np.array(
        [date.fromordinal(o).month for o in range(first, int(ordinals.max()) + 1)], dtype=np.int64
    )
    return months[ordinals - first]


def _gaps(u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """`int(-math.log(1.0 - u) * 4.3 * (1 - p) / p)` of each pair, exactly: numpy's log may
    differ from the C library's in the last bit, which can move a value across a whole number,
    so those within a hair of one are computed again with `math.log`."""
    x = -np.log(1.0 - u) * 4.3 * (1 - p) / p
    gap = x.astype(np.int64)
    frac = x - gap
    near = np.flatnonzero((frac < 1e-6) | (frac > 1 - 1e-6))
    for i in near.tolist():
        gap[i] = int(-math.log(1.0 - float(u[i])) * 4.3 * (1 - float(p[i])) / float(p[i]))
    return gap


def _cumulative(table: tuple[tuple[int, float], ...]) -> tuple[np.ndarray, np.ndarray]:
    """`_pick`'s running sums (added in its order) and values."""
    acc, sums = 0.0, []
    for _v, w in table:
        acc += w
        sums.append(acc)
    return np.array(sums), np.array([v for v, _w in table], dtype=np.int64)


def _pick_many(table: tuple[np.ndarray, np.ndarray], u: np.ndarray) -> np.ndarray:
    """`_pick(table, u)` of each draw: the first value whose running sum exceeds it."""
    sums, values = table
    return values[np.minimum(np.searchsorted(sums, u, side="right"), len(values) - 1)]
