"""The seeded history: unit timelines (never double-booked by construction), booking attributes,
per-reservation plans of status steps, and the split into "already booked" and "booked later".
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from sandbox.world.seasons import (
    CATS,
    CH_CODES,
)
from sandbox.world.timeline import TimelineMixin

from .allocator import release
from .clock import at, ms
from .reference import ADDONS
from .states import HELD


class GenerateMixin(TimelineMixin):
    """Builds the initial world; `_create_from_stay` is shared with `advance` (booked later)."""

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
        release()  # the bulk history's scratch memory, before the journal and the owners
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
        self._build_operations()  # last: its own generator, on the nights the stays left free
        self._build_allotments()  # its own generator too
        self._build_rentability()  # and its own
        # last, each from a random stream of its own: nothing above changes
        self._build_owners()
        self._build_channel_details(far_past)
        self._build_addons(far_past)
        self._build_offers(far_past)

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
