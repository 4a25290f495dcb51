"""The seeded history: unit timelines (never double-booked by construction), booking attributes,
per-reservation plans of status steps, and the split into "already booked" and "booked later".
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from .clock import at, ms, weekday
from .reference import ADDONS, CHANNELS
from .states import HELD

CATS = ("GUEST", "GROUP", "OWNER", "BLOCK")
CH_CODES = tuple(c[0] for c in CHANNELS)
# channel mix by the park's company currency (weights over CH_CODES)
CH_MIX = {
    "EUR": np.array([0.42, 0.13, 0.05, 0.28, 0.12]),
    "GBP": np.array([0.05, 0.05, 0.50, 0.20, 0.20]),
}
DUR_FRI = ((2, 0.35), (3, 0.30), (7, 0.25), (14, 0.10))
DUR_MON = ((4, 0.60), (7, 0.30), (11, 0.10))
DUR_OTHER = ((2, 0.25), (3, 0.25), (4, 0.25), (7, 0.25))


def _pick(table: tuple[tuple[int, float], ...], u: float) -> int:
    acc = 0.0
    for v, w in table:
        acc += w
        if u < acc:
            return v
    return table[-1][0]


def _season_target(o: int) -> float:
    """Target occupancy of a night: the seasonality of a holiday park."""
    d = date.fromordinal(o)
    m, dd = d.month, d.day
    if (m == 12 and dd >= 20) or (m == 1 and dd <= 5):
        p = 0.85
    elif m in (7, 8):
        p = 0.9
    elif (m == 4 and dd >= 26) or (m == 5 and dd <= 5) or (m == 10 and 17 <= dd <= 25):
        p = 0.8
    elif m in (4, 5, 6, 9, 10):
        p = 0.58
    else:
        p = 0.33
    if weekday(o) in (4, 5):
        p = min(0.95, p + 0.1)
    return p


class GenerateMixin:
    """Builds the initial world; `_create_from_stay` is shared with `advance` (booked later)."""

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

    def _stay_time(self, hours: float) -> datetime:
        dt = datetime.fromordinal(self.ord0) + timedelta(hours=float(hours))
        return dt.replace(microsecond=dt.microsecond // 1000 * 1000)

    def _pick_customer(self, t: datetime) -> int:
        py = self.py
        ids = self._cust_ids
        if ids and py.random() < 0.22:
            for _ in range(3):
                cid = ids[py.randrange(len(ids))]
                if cid in self.cust_res and self.t["customers"].get(cid) is not None:
                    return cid
        like = None
        if ids and py.random() < 0.015:
            orig = self.t["customers"].get(ids[py.randrange(len(ids))])
            if orig is not None:
                like = orig
        created = t - timedelta(minutes=py.randint(1, 90)) if self._generating else t
        rec = self._new_customer(created, like=like)
        cid = rec["customerId"]
        ids.append(cid)
        if like is not None:
            self._dups.append((like["customerId"], cid))
        return cid

    def _create_from_stay(self, i: int, t: datetime) -> Any | None:
        """Book stay `i` of the timeline at time t (None when its unit was taken meanwhile)."""
        s = self._stays
        u = int(s["unit"][i])
        arr = int(s["arr"][i])
        dep = arr + int(s["dur"][i])
        ti = self.types[int(self.unit_type[u])]
        cat = CATS[int(s["cat"][i])]
        ch = self.channels[CH_CODES[int(s["ch"][i])]]
        stv = float(s["st"][i])
        if cat == "BLOCK":
            status = "DEFINITIVE"
        elif cat == "OWNER" or ch.commission:
            status = "PROVISIONAL"
        else:
            status = (
                "PROVISIONAL"
                if stv < 0.68
                else "OPTIONAL"
                if stv < 0.80
                else "REQUEST"
                if stv < 0.87
                else "QUOTATION"
            )
        if status == "QUOTATION" or not self._unit_free(u, arr, dep - arr):
            alt = self._free_unit(ti, arr, dep - arr, prefer=u)
            if alt is None:
                return None
            u = alt
        if self.nightly(ti.idx, ch.rate_type_id, arr, dep - arr) is None:
            return None
        groups = [(1, int(s["adults"][i]))]
        if s["children"][i]:
            groups.append((2, int(s["children"][i])))
        if s["babies"][i]:
            groups.append((3, int(s["babies"][i])))
        pets = int(s["pets"][i])
        persons = sum(q for _, q in groups)
        extras: dict[str, int] = {}
        if cat in ("GUEST", "GROUP"):
            if s["linen"][i]:
                extras["LINEN"] = persons
            if s["cleaning"][i]:
                extras["CLEANING"] = 1
        if pets and cat != "BLOCK":
            extras["PETS"] = pets
        if cat == "BLOCK":
            groups, pets, extras = [(1, 1)], 0, {}
        cust = self._pick_customer(t)
        r = self._book(
            t,
            ti,
            u,
            arr,
            dep,
            ch,
            cat,
            status,
            cust,
            groups,
            pets,
            extras,
            int(s["discount"][i]),
            bool(s["paying"][i]),
        )
        if cat == "BLOCK":
            r.persons = 0
        self._run_steps(r, self._plan(r, t))
        return r

    # plans -------------------------------------------------------------------------------------
    def _plan(self, r: Any, t0: datetime) -> list[tuple[datetime, str, Any]]:
        py = self.py
        arr_t = at(r.arr, 15 + (r.rid % 300) / 60)
        dep_t = at(r.dep, 9 + (r.rid % 90) / 60)
        window = (arr_t - t0).total_seconds()
        steps: list[tuple[datetime, str, Any]] = []

        def within(lo_s: float, hi_s: float, cap: float = 0.9) -> datetime:
            sec = min(py.uniform(lo_s, hi_s), window * cap)
            return t0 + timedelta(seconds=max(60.0, sec), milliseconds=py.randint(0, 999))

        st = r.status
        if st in HELD or st == "QUOTATION":
            u = py.random()
            if u < 0.68:
                tc = within(600, 5 * 86400)
                steps.append((tc, "confirm", None))
                steps += self._plan_after_confirm(r, tc, arr_t)
            elif st == "REQUEST" or u > 0.9:
                steps.append((within(3600, 4 * 86400), "decline", None))
            else:
                te = t0 + timedelta(days=7)
                if te < arr_t:
                    steps.append((te, "expire", None))
        elif st == "PROVISIONAL":
            steps += self._plan_after_confirm(r, t0, arr_t)
        steps.append((arr_t, "arrive", r.arr))
        steps.append((dep_t, "depart", r.dep))
        steps.sort(key=lambda s: s[0])
        return steps

    def _plan_after_confirm(
        self, r: Any, tc: datetime, arr_t: datetime | None = None
    ) -> list[tuple[datetime, str, Any]]:
        py = self.py
        if arr_t is None:
            arr_t = at(r.arr, 15 + (r.rid % 300) / 60)
        window = max(120.0, (arr_t - tc).total_seconds())
        lead_days = window / 86400

        def frac(lo: float, hi: float) -> datetime:
            return tc + timedelta(
                seconds=max(60.0, window * py.uniform(lo, hi)), milliseconds=py.randint(0, 999)
            )

        steps: list[tuple[datetime, str, Any]] = []
        if r.guest and py.random() < 0.06 + 0.08 * min(1.0, lead_days / 180):
            tx = frac(0.05, 0.95)
            steps.append((tx, "cancel", None))
            if py.random() < 0.35:
                steps.append((tx + timedelta(days=py.uniform(1, 40)), "defcancel", None))
        elif r.guest and py.random() < 0.01:
            steps.append((frac(0.01, 0.2), "decline", None))
        if r.category == "OWNER":
            steps.append((frac(0.01, 0.3), "pay", ("CUSTOMER", 1.0)))
        elif r.rent_payer == "AGENT":
            steps.append((frac(0.02, 0.4), "pay", ("AGENT", 1.0)))
        elif r.guest and py.random() < 0.85:
            steps.append((frac(0.0, 0.15), "pay", (r.rent_payer, 0.3)))
            if lead_days > 35:
                steps.append((arr_t - timedelta(days=py.uniform(28, 34)), "payall", None))
        steps.sort(key=lambda s: s[0])
        return steps

    def _run_steps(self, r: Any, steps: list[tuple[datetime, str, Any]]) -> None:
        """Apply the steps that are due now, schedule the rest."""
        now = self.now
        for t0, action, arg in steps:
            t = ms(t0)
            if t <= now:
                if r.rid in self.res:
                    self._step(r, action, arg, t)
            else:
                self._schedule(t, r.rid, action, arg)

    # the whole initial world -------------------------------------------------------------------
    def _generate(self) -> None:
        now_ord = self.now.toordinal()
        self.ord0 = now_ord - 730
        self.ord_end = now_ord + 1100
        far_past = self.ord0 - 3650
        self._build_reference(far_past)
        self._build_rates(far_past)
        self._build_cash_accounts()
        self.occ = np.zeros((len(self.unit_ids), self.ord_end - self.ord0), dtype=np.int32)
        self._stays = self._timeline(now_ord + 430)
        rest = self._stays["restime"]
        now_h = (self.now - datetime.fromordinal(self.ord0)).total_seconds() / 3600
        n_now = int(np.searchsorted(rest, now_h, side="right"))
        self._generate_bulk(n_now)
        self._pool_pos = n_now
        # the last hours: a few shopping carts (INIT) and a couple of customer merges
        py = self.py
        for _ in range(max(2, len(self.unit_ids) // 25)):
            self._spawn_cart(self.now - timedelta(minutes=py.uniform(1, 50)))
        for _ in range(max(1, len(self.unit_ids) // 60)):
            self._random_merge(self.now - timedelta(hours=py.uniform(2, 150)))
        self._clear_cash_until(self.now)
        self._bulk_flush_postings()
        self._flush_events()

    def _spawn_cart(self, t: datetime) -> Any | None:
        """A booking in progress (INIT): completed or deleted within the hour or two."""
        py = self.py
        ti = self.types[py.randrange(len(self.types))]
        arr = t.toordinal() + py.randint(3, 120)
        nights = py.choice((2, 3, 4, 7))
        u = self._free_unit(ti, arr, nights)
        ch = self.channels["WEB-GBP" if ti.currency == "GBP" else "WEB-EUR"]
        if u is None or self.nightly(ti.idx, ch.rate_type_id, arr, nights) is None:
            return None
        cust = self._pick_customer(t)
        r = self._book(
            t,
            ti,
            u,
            arr,
            arr + nights,
            ch,
            "GUEST",
            "INIT",
            cust,
            [(1, 2)],
            0,
            {"CLEANING": 1},
            0,
            False,
        )
        later = max(t + timedelta(minutes=py.uniform(5, 40)), self.now + timedelta(minutes=1))
        if py.random() < 0.6:
            steps = [(later, "book", None)]
        else:
            steps = [(later + timedelta(minutes=30), "delete", None)]
        steps += [
            (at(r.arr, 15 + (r.rid % 300) / 60), "arrive", r.arr),
            (at(r.dep, 9 + (r.rid % 90) / 60), "depart", r.dep),
        ]
        self._run_steps(r, steps)
        return r

    def _random_merge(self, t: datetime) -> bool:
        """Merge a duplicate customer into its original when nothing of it is newer than t."""
        from .clock import dtstr

        stamp = dtstr(t)
        tbl = self.t["customers"]
        for k, (orig, dup) in enumerate(self._dups):
            o, d = tbl.get(orig), tbl.get(dup)
            if o is None or d is None or d["createdDate"] >= stamp or o["createdDate"] >= stamp:
                continue
            res_tbl = self.t["reservations"]
            if any(
                (rec := res_tbl.get(rid)) is not None and rec["reservationDate"] >= stamp
                for rid in self.cust_res.get(dup, ())
            ):
                continue
            del self._dups[k]
            self.merge_customers(orig, dup, t)
            return True
        return False


__all__ = ["ADDONS", "GenerateMixin"]
