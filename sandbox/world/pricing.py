"""Seasonal rates and the nightly list price they imply (contracts.md: highest priority wins)."""

from __future__ import annotations

from datetime import date

import numpy as np

from .clock import WEEKDAYS, dstr, weekday

# (name, month/day from, month/day to (next year when it wraps), priority, multiplier, FRI/SAT only)
SEASONS = (
    ("Spring", (4, 1), (6, 30), 4, 1.30, False),
    ("Autumn", (9, 1), (10, 31), 4, 1.25, False),
    ("High season", (7, 1), (8, 31), 5, 1.80, False),
    ("High season weekend", (7, 1), (8, 31), 6, 2.00, True),
    ("May holidays", (4, 26), (5, 5), 7, 1.50, False),
    ("Autumn holidays", (10, 17), (10, 25), 7, 1.45, False),
    ("Christmas holidays", (12, 20), (1, 5), 8, 1.70, False),
)
WEEKEND = ("FRI", "SAT")


class PricingMixin:
    """Rates as records plus per (type, rate type) arrays of nightly price and rate id."""

    def _rate_record(
        self,
        ti,
        rt: int,
        vf: int,
        vt: int,
        prio: int,
        cents: int,
        days: tuple[str, ...] | None,
        bookfrom: int | None,
    ) -> dict:
        rate_id = self.t["rates"].new_id()
        rec = {
            "rateId": rate_id,
            "resourceId": ti.resource_id,
            "rateTypeId": rt,
            "rateTypeIds": [rt],
            "rateOptionId": self.rate_option_night[rt],
            "value": cents / 100,
            "quantifier": "OVERRIDE",
            "valueType": "single",
            "priority": prio,
            "validFrom": dstr(vf),
            "validTo": dstr(vt),
            "bookdateFrom": dstr(bookfrom) if bookfrom is not None else None,
            "bookdateTo": None,
            "minDuration": 1,
            "maxDuration": None,
            "applicableDays": list(days) if days else None,
            "status": 1,
        }
        self.t["rates"].add(rec)
        self.rate_specs.setdefault((ti.idx, rt), []).append((prio, rate_id, vf, vt, days, cents))
        return rec

    def _build_rates(self, far_past: int) -> None:
        self.rate_specs: dict[tuple[int, int], list[tuple]] = {}
        self.price: dict[tuple[int, int], np.ndarray] = {}
        self.price_rate: dict[tuple[int, int], np.ndarray] = {}
        n = self.ord_end - self.ord0
        # one row per (type, rate type) in `rate_types` order; `price[...]` are views of rows
        self._rt_order = sorted(self.rate_types)
        k = len(self.types) * len(self._rt_order)
        self.price_m = np.full((k, n), -1, dtype=np.int32)
        self.rate_m = np.zeros((k, n), dtype=np.int32)
        self._wd = np.array([weekday(self.ord0 + i) for i in range(n)], dtype=np.int8)
        y0 = date.fromordinal(self.ord0).year - 1
        y1 = date.fromordinal(self.ord_end).year
        last = self.ord_end - 1
        for ti in self.types:
            for rt, (_code, _cur, factor) in self.rate_types.items():

                def c(mult: float, ti=ti, factor=factor) -> int:
                    return round(ti.base_cents * factor * mult / 100) * 100

                self._rate_record(ti, rt, far_past, last, 1, c(1.0), None, None)
                self._rate_record(ti, rt, far_past, last, 3, c(1.25), WEEKEND, None)
                for y in range(y0, y1 + 1):
                    for _name, (m0, d0), (m1, d1), prio, mult, wk in SEASONS:
                        vf = date(y, m0, d0).toordinal()
                        vt = date(y + (1 if m1 < m0 else 0), m1, d1).toordinal()
                        if vt < self.ord0 or vf > last:
                            continue
                        self._rate_record(
                            ti, rt, vf, vt, prio, c(mult), WEEKEND if wk else None, vf - 400
                        )
                self._recompute_price(ti.idx, rt)

    def _recompute_price(self, type_idx: int, rt: int) -> None:
        n = self.ord_end - self.ord0
        price = np.full(n, -1, dtype=np.int64)
        rate = np.zeros(n, dtype=np.int64)
        for _prio, rate_id, vf, vt, days, cents in sorted(
            self.rate_specs[(type_idx, rt)], key=lambda s: (s[0], s[1])
        ):
            lo = max(vf, self.ord0) - self.ord0
            hi = min(vt + 1, self.ord_end) - self.ord0
            if hi <= lo:
                continue
            if days:
                wds = [WEEKDAYS.index(d) for d in days]
                m = np.isin(self._wd[lo:hi], wds)
                price[lo:hi][m] = cents
                rate[lo:hi][m] = rate_id
            else:
                price[lo:hi] = cents
                rate[lo:hi] = rate_id
        row = type_idx * len(self._rt_order) + self._rt_order.index(rt)
        self.price_m[row] = price
        self.rate_m[row] = rate
        self.price[(type_idx, rt)] = self.price_m[row]
        self.price_rate[(type_idx, rt)] = self.rate_m[row]

    def nightly(self, type_idx: int, rt: int, first: int, nights: int) -> np.ndarray | None:
        """List prices (cents) of `nights` nights from day ordinal `first`; None if unpriced."""
        lo = first - self.ord0
        hi = lo + nights
        if lo < 0 or hi > self.ord_end - self.ord0:
            return None
        p = self.price[(type_idx, rt)][lo:hi]
        if (p < 0).any():
            return None
        return p

    def price_runs(
        self, type_idx: int, rt: int, first: int, nights: int, override: int | None = None
    ) -> list[tuple[int, int, int, int | None]]:
        """Runs of equal nightly price: [(first night ordinal, nights, cents, rateId)]."""
        if override is not None:
            return [(first, nights, override, None)]
        lo = first - self.ord0
        p = self.price[(type_idx, rt)][lo : lo + nights].tolist()
        r = self.price_rate[(type_idx, rt)][lo : lo + nights].tolist()
        runs: list[tuple[int, int, int, int | None]] = []
        s = 0
        for i in range(1, nights + 1):
            if i == nights or p[i] != p[s]:
                runs.append((first + s, i - s, p[s], r[s]))
                s = i
        return runs

    def _change_rate(self, ti, rt: int, first: int, nights: int, factor: float, t_ord: int) -> dict:
        """A promotion: a new higher-priority rate over a future window (never touches bills)."""
        p = self.nightly(ti.idx, rt, first, 1)
        base = int(p[0]) if p is not None else ti.base_cents
        cents = max(100, round(base * factor / 100) * 100)
        prio = 20 + len(self.rate_specs[(ti.idx, rt)])
        rec = self._rate_record(ti, rt, first, first + nights - 1, prio, cents, None, t_ord)
        self._recompute_price(ti.idx, rt)
        return rec
