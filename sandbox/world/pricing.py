"""Rates and the nightly prices they imply: seasonal list prices per night, plus rates bound to
the arrival date, the booking date or the length of stay (docs/sandbox.md, "Rates")."""

from __future__ import annotations

from datetime import date

import numpy as np

from .clock import WEEKDAYS, dstr, weekday
from .rate_rules import NO_RANK, OPEN, RateSpec, SpecTable, Window

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
# Rates bound to the stay, on every (type, rate type), made after all the seasonal ones:
# stays of at most 2 nights pay a surcharge per night (ABSOLUTE, in the rate type's currency,
# ranked above everything), stays of 14 nights or more 10 % less (RELATIVE; priority 7, so the
# Christmas rate and promotions replace it), a week arriving Jul 1 - Aug 24 has its own price
# (OVERRIDE of exactly 7 nights, arrival window, priority 9), and a spring arrival booked from
# Oct 1 to Jan 31 before it costs 8 % less (RELATIVE, booking and arrival windows, priority 10).
SHORT_STAY = ("Short stay surcharge", 2, 1500, 900)  # max nights, cents before factor, priority
LONG_STAY = ("Long stay discount", 14, -1000, 7)  # min nights, hundredths of %, priority
SUMMER_WEEK = ("Summer week", (7, 1), (8, 24), (8, 31), 7, 1.60, 9)
ADVANCE = ("Advance booking spring", (10, 1), (1, 31), (4, 1), (6, 30), -800, 10)
PROMOTION_PRIORITY = 20
SPECIAL_CHUNK = 500_000  # stay nights priced per pass over the special rates


class PricingMixin:
    """Rates as records plus per (type, rate type) arrays of the unconditional nightly price and
    rate id; the rates bound to the stay (`rate_special`) are applied per stay."""

    def _rate_record(
        self,
        ti,
        rt: int,
        prio: int,
        quantifier: str,
        amount: int,
        *,
        name: str,
        nights: Window = OPEN,
        days: tuple[str, ...] | None = None,
        arrival: Window = OPEN,
        booked: Window = OPEN,
        duration: Window = (1, None),
    ) -> dict:
        """One rate: `amount` in cents, or in hundredths of a percent for RELATIVE."""
        rate_id = self.t["rates"].new_id()

        def d(o: int | None) -> str | None:
            return dstr(o) if o is not None else None

        rec = {
            "rateId": rate_id,
            "resourceId": ti.resource_id,
            "rateTypeId": rt,
            "rateTypeIds": [rt],
            "rateOptionId": self.rate_option_night[rt],
            "value": amount / 100,
            "quantifier": quantifier,
            "valueType": "single",
            "priority": prio,
            "validFrom": d(arrival[0]),
            "validTo": d(arrival[1]),
            "usageDurationFrom": d(nights[0]),
            "usageDurationTo": d(nights[1]),
            "bookdateFrom": d(booked[0]),
            "bookdateTo": d(booked[1]),
            "minDuration": duration[0],
            "maxDuration": duration[1],
            "applicableDays": list(days) if days else None,
            "status": 1,
            "remark": name,
        }
        self.t["rates"].add(rec)
        spec = RateSpec(
            prio,
            rate_id,
            quantifier,
            amount,
            nights,
            tuple(WEEKDAYS.index(x) for x in days) if days else None,
            arrival,
            booked,
            duration,
        )
        if rate_id >= len(self._rate_rank):
            grown = np.full(max(2 * len(self._rate_rank), rate_id + 1), NO_RANK, dtype=np.int64)
            grown[: len(self._rate_rank)] = self._rate_rank
            self._rate_rank = grown
        self._rate_rank[rate_id] = prio
        key = (ti.idx, rt)
        if spec.special:
            specials = self.rate_special.setdefault(key, [])
            specials.append(spec)
            table = self._spec_table
            if table is not None and not table.set_row(self._price_row(*key), specials):
                self._spec_table = None  # wider than the table: rebuilt when next needed
        else:
            self.rate_specs.setdefault(key, []).append(spec)
        return rec

    def _build_rates(self, far_past: int) -> None:
        self.rate_specs: dict[tuple[int, int], list[RateSpec]] = {}
        self.rate_special: dict[tuple[int, int], list[RateSpec]] = {}
        self._spec_table: SpecTable | None = None
        self._rate_rank = np.full(1024, NO_RANK, dtype=np.int64)  # priority by rateId
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
        self._promotions: dict[tuple[int, int], int] = {}
        for ti in self.types:
            for rt, (_code, _cur, factor) in self.rate_types.items():

                def c(mult: float, ti=ti, factor=factor) -> int:
                    return round(ti.base_cents * factor * mult / 100) * 100

                window = (far_past, last)
                self._rate_record(ti, rt, 1, "OVERRIDE", c(1.0), name="Base", nights=window)
                self._rate_record(
                    ti, rt, 3, "OVERRIDE", c(1.25), name="Weekend", nights=window, days=WEEKEND
                )
                for y in range(y0, y1 + 1):
                    for name, (m0, d0), (m1, d1), prio, mult, wk in SEASONS:
                        vf = date(y, m0, d0).toordinal()
                        vt = date(y + (1 if m1 < m0 else 0), m1, d1).toordinal()
                        if vt < self.ord0 or vf > last:
                            continue
                        self._rate_record(
                            ti,
                            rt,
                            prio,
                            "OVERRIDE",
                            c(mult),
                            name=name,
                            nights=(vf, vt),
                            days=WEEKEND if wk else None,
                        )
        for ti in self.types:
            for rt, (_code, _cur, factor) in self.rate_types.items():
                self._stay_rates(ti, rt, factor, y0, y1)
                self._recompute_price(ti.idx, rt)

    def _stay_rates(self, ti, rt: int, factor: float, y0: int, y1: int) -> None:
        """The rates bound to the arrival date, the booking date or the length of stay."""
        name, most, surcharge, prio = SHORT_STAY
        cents = round(surcharge * factor / 100) * 100
        self._rate_record(ti, rt, prio, "ABSOLUTE", cents, name=name, duration=(1, most))
        name, least, pct, prio = LONG_STAY
        self._rate_record(ti, rt, prio, "RELATIVE", pct, name=name, duration=(least, None))
        last = self.ord_end - 1
        for y in range(y0, y1 + 1):
            name, a0, a1, n1, stay, mult, prio = SUMMER_WEEK
            first, upto = date(y, *a0).toordinal(), date(y, *a1).toordinal()
            if first <= last and upto >= self.ord0:
                self._rate_record(
                    ti,
                    rt,
                    prio,
                    "OVERRIDE",
                    round(ti.base_cents * factor * mult / 100) * 100,
                    name=name,
                    nights=(first, date(y, *n1).toordinal()),
                    arrival=(first, upto),
                    duration=(stay, stay),
                )
            name, b0, b1, a0, a1, pct, prio = ADVANCE
            first, upto = date(y, *a0).toordinal(), date(y, *a1).toordinal()
            if first <= last and upto >= self.ord0:
                self._rate_record(
                    ti,
                    rt,
                    prio,
                    "RELATIVE",
                    pct,
                    name=name,
                    arrival=(first, upto),
                    booked=(date(y - 1, *b0).toordinal(), date(y, *b1).toordinal()),
                )

    def _recompute_price(self, type_idx: int, rt: int) -> None:
        """The per-night arrays from the unconditional OVERRIDE rates (highest priority wins)."""
        n = self.ord_end - self.ord0
        price = np.full(n, -1, dtype=np.int64)
        rate = np.zeros(n, dtype=np.int64)
        for spec in sorted(self.rate_specs[(type_idx, rt)], key=lambda s: (s.prio, s.rate_id)):
            vf = spec.nights[0] if spec.nights[0] is not None else self.ord0
            vt = spec.nights[1] if spec.nights[1] is not None else self.ord_end - 1
            lo = max(vf, self.ord0) - self.ord0
            hi = min(vt + 1, self.ord_end) - self.ord0
            if hi <= lo:
                continue
            if spec.days:
                m = np.isin(self._wd[lo:hi], spec.days)
                price[lo:hi][m] = spec.amount
                rate[lo:hi][m] = spec.rate_id
            else:
                price[lo:hi] = spec.amount
                rate[lo:hi] = spec.rate_id
        row = self._price_row(type_idx, rt)
        self.price_m[row] = price
        self.rate_m[row] = rate
        self.price[(type_idx, rt)] = self.price_m[row]
        self.price_rate[(type_idx, rt)] = self.rate_m[row]

    def _price_row(self, type_idx: int, rt: int) -> int:
        return type_idx * len(self._rt_order) + self._rt_order.index(rt)

    def nightly(self, type_idx: int, rt: int, first: int, nights: int) -> np.ndarray | None:
        """Unconditional list prices (cents) of `nights` nights from day ordinal `first`; None
        if a night has none (the stay-bound rates never price a night these leave open)."""
        lo = first - self.ord0
        hi = lo + nights
        if lo < 0 or hi > self.ord_end - self.ord0:
            return None
        p = self.price[(type_idx, rt)][lo:hi]
        if (p < 0).any():
            return None
        return p

    def stay_prices(
        self,
        row: np.ndarray,
        day: np.ndarray,
        arrival: np.ndarray,
        stay: np.ndarray,
        booked: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Price (cents, -1 = none) and winning OVERRIDE rateId of stay nights: price row
        (`_price_row`), night (index from ord0, inside the horizon), the stay's arrival ordinal,
        its nights and the ordinal of its booking day, one element per stay night."""
        price = self.price_m[row, day].astype(np.int64)
        rate = self.rate_m[row, day].astype(np.int64)
        if self._spec_table is None:
            n_rt = len(self._rt_order)
            by_row = {
                ti * n_rt + self._rt_order.index(rt): v for (ti, rt), v in self.rate_special.items()
            }
            self._spec_table = SpecTable(by_row, len(self.price_m))
        table = self._spec_table
        sel = np.flatnonzero(table.any[row])
        for lo in range(0, len(sel), SPECIAL_CHUNK):
            idx = sel[lo : lo + SPECIAL_CHUNK]
            d = day[idx]
            stay_of = {
                "nights": d + self.ord0,
                "arrival": arrival[idx],
                "booked": booked[idx],
                "duration": stay[idx],
            }
            price[idx], rate[idx] = table.apply(
                row[idx], stay_of, self._wd[d], price[idx], rate[idx], self._rate_rank
            )
        return price, rate

    def price_runs(
        self,
        type_idx: int,
        rt: int,
        first: int,
        nights: int,
        override: int | None = None,
        *,
        stay: tuple[int, int, int],
    ) -> list[tuple[int, int, int, int | None]]:
        """Runs of equal nightly price: [(first night ordinal, nights, cents, rateId)] of nights
        [first, first + nights) of the stay `(arrival, nights, booking day ordinal)`."""
        if override is not None:
            return [(first, nights, override, None)]
        k = np.full(nights, self._price_row(type_idx, rt), dtype=np.int64)
        day = np.arange(first - self.ord0, first - self.ord0 + nights, dtype=np.int64)
        arrival, n, booked = (np.full(nights, v, dtype=np.int64) for v in stay)
        price, rate = self.stay_prices(k, day, arrival, n, booked)
        p, r = price.tolist(), rate.tolist()
        runs: list[tuple[int, int, int, int | None]] = []
        s = 0
        for i in range(1, nights + 1):
            if i == nights or p[i] != p[s]:
                runs.append((first + s, i - s, p[s], r[s]))
                s = i
        return runs

    def stay_totals(
        self, type_idx: int, rt: int, a0: int, n_arr: int, durs: list[int], booked: int
    ) -> np.ndarray:
        """Price (cents; -1 = unpriced or outside the horizon) of the stays arriving a0 ..
        a0 + n_arr - 1 for each of `durs` nights, booked on day `booked`: [arrival, duration]."""
        return self.stay_totals_of([(type_idx, rt)], a0, n_arr, durs, booked)[0]

    def stay_totals_of(
        self, pairs: list[tuple[int, int]], a0: int, n_arr: int, durs: list[int], booked: int
    ) -> np.ndarray:
        """`stay_totals` of many (type index, rate type) pairs at once, priced in one pass
        (each stay night is priced on its own, so the batch gives each pair's exact figures):
        [pair, arrival, duration]."""
        n = self.ord_end - self.ord0
        n_stays = n_arr * len(durs)
        arr_i = np.repeat(np.arange(n_arr), len(durs))
        dur = np.tile(np.asarray(durs, dtype=np.int64), n_arr)
        rows = np.repeat(np.arange(n_stays), dur)
        offs = np.arange(len(rows)) - np.repeat(np.cumsum(dur) - dur, dur)
        day = a0 - self.ord0 + arr_i[rows] + offs
        inside = (day >= 0) & (day < n)
        all_keys = np.asarray([self._price_row(ti, rt) for ti, rt in pairs], dtype=np.int64)
        m = len(rows)
        step = max(1, SPECIAL_CHUNK // max(m, 1))  # pairs per pass: memory stays bounded
        out = np.empty((len(all_keys), n_stays), dtype=np.int64)
        for lo in range(0, len(all_keys), step):
            keys = all_keys[lo : lo + step]
            price, _rate = self.stay_prices(
                np.repeat(keys, m),
                np.tile(np.clip(day, 0, n - 1), len(keys)),
                np.tile(a0 + arr_i[rows], len(keys)),
                np.tile(dur[rows], len(keys)),
                np.full(m * len(keys), booked, dtype=np.int64),
            )
            stay = (np.arange(len(keys), dtype=np.int64)[:, None] * n_stays + rows).ravel()
            bad_w = (~np.tile(inside, len(keys))) | (price < 0)
            size = n_stays * len(keys)
            bad = np.bincount(stay, weights=bad_w, minlength=size) > 0
            total = np.bincount(stay, weights=np.where(price > 0, price, 0), minlength=size)
            out[lo : lo + len(keys)] = np.where(bad, -1, total.astype(np.int64)).reshape(
                len(keys), n_stays
            )
        return out.reshape(len(all_keys), n_arr, len(durs))

    def _change_rate(self, ti, rt: int, first: int, nights: int, factor: float, t_ord: int) -> dict:
        """A promotion: a new higher-priority rate over a future window of nights, for bookings
        from the next day on (so never for a stay booked before it; never touches bills)."""
        p = self.nightly(ti.idx, rt, first, 1)
        base = int(p[0]) if p is not None else ti.base_cents
        cents = max(100, round(base * factor / 100) * 100)
        key = (ti.idx, rt)
        self._promotions[key] = self._promotions.get(key, 0) + 1
        prio = PROMOTION_PRIORITY + len(self.rate_specs[key]) + self._promotions[key] - 1
        rec = self._rate_record(
            ti,
            rt,
            prio,
            "OVERRIDE",
            cents,
            name="Promotion",
            nights=(first, first + nights - 1),
            booked=(t_ord + 1, None),
        )
        return rec
