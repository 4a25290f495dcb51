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
    _pick,
    _season_target,
)

from .clock import weekday


class TimelineMixin:
    """The timeline of the generated history: every stay of the world's past and near future, as columns."""

    def _timeline(self, gen_end: int) -> dict[str, np.ndarray]:
        rng = self.rng
        n_days = gen_end - self.ord0
        target = np.array([_season_target(self.ord0 + i) for i in range(n_days)])
        units: list[int] = []
        arrs: list[int] = []
        durs: list[int] = []
        for u in range(len(self.unit_ids)):
            ti = self.types[int(self.unit_type[u])]
            winter_factor = 0.4 if ti.kind == "CAMPING_PITCH" else 1.0
            c = max(self.ord0, int(self.unit_setup[u]))
            end = min(gen_end, int(self.unit_arch[u]))
            k = 0
            draws = rng.random((4, 700))
            while c < end and k < 700:
                p = float(target[c - self.ord0])
                if winter_factor < 1 and date.fromordinal(c).month in (11, 12, 1, 2, 3):
                    p *= winter_factor
                gap = int(-math.log(1.0 - draws[0, k]) * 4.3 * (1 - p) / p)
                a = c + gap
                if draws[1, k] < 0.85:
                    while weekday(a) not in (0, 4):
                        a += 1
                wd = weekday(a)
                table = DUR_FRI if wd == 4 else (DUR_MON if wd == 0 else DUR_OTHER)
                d = _pick(table, float(draws[2, k]))
                k += 1
                if a + d > end:
                    break
                units.append(u)
                arrs.append(a)
                durs.append(d)
                c = a + d
        unit = np.array(units, dtype=np.int64)
        arr = np.array(arrs, dtype=np.int64)
        dur = np.array(durs, dtype=np.int64)
        n = len(unit)
        tidx = self.unit_type[unit]
        kind = np.array([self.types[int(i)].kind for i in tidx]) if n else np.array([])
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
        high = (
            np.isin(
                np.array([date.fromordinal(int(a)).month for a in arr], dtype=np.int64), [7, 8, 12]
            )
            if n
            else np.zeros(0, bool)
        )
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
