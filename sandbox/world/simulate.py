"""Moving the clock: planned steps, bookings made later, and the odd spontaneous change."""

from __future__ import annotations

import heapq
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from sandbox.protocol import WorldError

from .clock import dstr, ms
from .offers import CHANGES_PER_DAY as OFFER_AREA_CHANGES

# spontaneous changes per simulated day, per 100 units (rate changes and archives per world)
RATES_PER_DAY = {
    "extend": 0.8,
    "cart": 1.0,
    "merge": 0.4,
}
WORLD_RATES_PER_DAY = {"rate_change": 0.5, "unit_archive": 0.1}
EXTENDABLE = ("PROVISIONAL", "DEFINITIVE", "CHECKED_IN")


class SimulateMixin:
    """`advance` runs everything due between the old and the new clock, in time order."""

    def advance(self, hours: float) -> dict[str, Any]:
        """Move the clock forward by `hours`, simulating the business; returns a summary."""
        with self.lock:
            if hours < 0:
                raise WorldError("the clock only moves forward")
            start = self.now
            target = ms(start + timedelta(hours=hours))
            first_event = self.t["events"].next_id
            counters = {k: getattr(self, k) for k in self._COUNTERS}
            spont = self._draw_spontaneous(start, target)
            self._draw_operations(start, target)
            self._draw_allotments(start, target)
            self._draw_rentability(start, target)
            self._draw_reference_changes(start, target)
            # owners and channel details: streams of their own, so nothing else changes
            owner_changes = sorted(
                self._draw_owner_changes(start, target)
                + self._draw_channel_changes(start, target)
                + self._draw_addon_changes(start, target)
                + self._draw_offer_changes(start, target)
            )
            oi = 0
            rest = self._stays["restime"]
            base = datetime.fromordinal(self.ord0)
            si = 0
            changed: set[int] = set()
            while True:
                t_heap = self.heap[0][0] if self.heap else None
                t_pool = None
                if self._pool_pos < len(rest):
                    t_pool = base + timedelta(hours=float(rest[self._pool_pos]))
                t_sp = spont[si][0] if si < len(spont) else None
                t_own = owner_changes[oi][0] if oi < len(owner_changes) else None
                cands = [
                    (x, k)
                    for k, x in enumerate((t_heap, t_pool, t_sp, t_own))
                    if x is not None and x <= target
                ]
                if not cands:
                    break
                when, src = min(cands)
                t = max(self.now, ms(when))
                self.now = t
                if src == 3 and owner_changes[oi][1] in OFFER_AREA_CHANGES:
                    # no stop for the time-driven areas here: their changes keep the times
                    # they had without offers (the world stays byte-identical)
                    kind = owner_changes[oi][1]
                    oi += 1
                    self._offer_area_change(kind, t)
                    continue
                self._clear_cash_until(t)
                self._operations_until(t)
                self._allotments_until(t)
                self._rentability_until(t)
                self._reference_changes_until(t)
                if src == 0:
                    _t, _s, rid, action, arg = heapq.heappop(self.heap)
                    r = self._res(rid)
                    if r is not None and self._step(r, action, arg, t):
                        changed.add(rid)
                elif src == 1:
                    i = self._pool_pos
                    self._pool_pos += 1
                    r = self._create_from_stay(i, t)
                    if r is not None:
                        changed.add(r.rid)
                elif src == 2:
                    kind = spont[si][1]
                    si += 1
                    rid = self._spontaneous(kind, t)
                    if rid:
                        changed.add(rid)
                else:
                    kind = owner_changes[oi][1]
                    oi += 1
                    if kind == "channel":
                        self._channel_change(t)
                    elif kind == "addon":
                        self._addon_change(t)
                    else:
                        self._owner_change(kind, t)
            self.now = target
            self._clear_cash_until(target)
            self._operations_until(target)
            self._allotments_until(target)
            self._rentability_until(target)
            self._reference_changes_until(target)
            self._close_owner_months(target)
            summary = {k: getattr(self, k) - v for k, v in counters.items()}
            summary.update(
                {
                    "from": start.isoformat(),
                    "to": target.isoformat(),
                    "firstEventId": first_event,
                    "lastEventId": self.t["events"].next_id - 1,
                    "reservationsChanged": len(changed),
                }
            )
            return summary

    def _draw_spontaneous(self, start: datetime, end: datetime) -> list[tuple[datetime, str]]:
        days = (end - start).total_seconds() / 86400
        if days <= 0:
            return []
        out: list[tuple[datetime, str]] = []
        span = (end - start).total_seconds()
        per100 = len(self.unit_ids) / 100
        rates = {k: v * per100 for k, v in RATES_PER_DAY.items()}
        rates.update(WORLD_RATES_PER_DAY)
        for kind, lam in rates.items():
            for _ in range(int(self.rng.poisson(lam * days))):
                sec = float(self.rng.uniform(0, span))
                out.append((ms(start + timedelta(seconds=sec)), kind))
        out.sort(key=lambda x: x[0])
        return out

    def _spontaneous(self, kind: str, t: datetime) -> int | None:
        py = self.py
        if kind == "extend":
            cands = [
                r
                for r in (self._res_if(k, EXTENDABLE) for k in self._recent_keys(400))
                if r is not None
                and r.status in ("PROVISIONAL", "DEFINITIVE", "CHECKED_IN")
                and r.dep > t.toordinal()
            ]
            if cands:
                r = cands[py.randrange(len(cands))]
                if self._extend(r, py.choice((1, 1, 2, 3, 7)), t):
                    return r.rid
        elif kind == "cart":
            r = self._spawn_cart(t)
            return r.rid if r is not None else None
        elif kind == "merge":
            self._random_merge(t)
        elif kind == "rate_change":
            ti = self.types[py.randrange(len(self.types))]
            rt = py.choice(list(self.rate_types))
            first = t.toordinal() + py.randint(14, 200)
            if self._in_horizon(first, 30):
                self._change_rate(
                    ti, rt, first, py.randint(7, 30), py.uniform(0.8, 0.95), t.toordinal()
                )
                self._event("RATE_EVENT", ti.resource_id, "UPDATE", t)
                self._event("AVAILABILITY_EVENT", ti.resource_id, "UPDATE", t)
        elif kind == "unit_archive":
            self._archive_random_unit(t)
        return None

    def _oldest_with_status(self, statuses: tuple[str, ...]) -> Any:
        """The reservation with the lowest id in one of `statuses` (bulk ones are thawed)."""
        from sandbox.world.states import CODES

        best = min((k for k, r in self.res.items() if r.status in statuses), default=None)
        rows = self._frozen_rows()
        if len(rows):
            codes = np.array([CODES[s] for s in statuses])
            hit = rows[np.isin(self._fz.status[rows], codes)]
            if len(hit):
                key = int(hit[0]) + self.t["reservations"].block.base
                if best is None or key < best:
                    return self._res(key)
        return self.res[best] if best is not None else None

    def _recent_keys(self, n: int) -> list[int]:
        keys = self.t["reservations"].key_list()
        return keys[-n:]

    def _archive_random_unit(self, t: datetime) -> bool:
        """Archive a unit from the first night after its last held stay (at least 30 days out)."""
        py = self.py
        live = [u for u in range(len(self.unit_ids)) if self.unit_arch[u] >= 10**7]
        if len(live) < 2:
            return False
        u = live[py.randrange(len(live))]
        ti = self.types[int(self.unit_type[u])]
        if len(ti.units) < 2:
            return False
        lo = t.toordinal() + 30 - self.ord0
        row = self.occ[u, lo:]
        nz = row.nonzero()[0]
        first = t.toordinal() + 30 + (int(nz[-1]) + 1 if len(nz) else 0)
        if first >= self.ord_end:
            return False
        self.unit_arch[u] = first
        rec = self.t["units"].get(self.unit_ids[u])
        rec["archivedFrom"] = dstr(first)
        self._event("UNIT_EVENT", self.unit_ids[u], "UPDATE", t)
        self._event("AVAILABILITY_EVENT", ti.resource_id, "UPDATE", t)
        self.n_archived += 1
        return True

    # churn (the server's churn fault) --------------------------------------------------------
    def churn(self, collection: str) -> dict[str, Any]:
        """Insert one record and delete one of `collection`, with events (page-shift faults)."""
        with self.lock:
            t = self.now
            if collection == "reservations":
                new = self._spawn_cart(t)
                victim = None
                for key in sorted(self.res):  # INIT only ever lives in `res`
                    r = self.res[key]
                    if r.status == "INIT" and (new is None or key != new.rid):
                        victim = r
                        break
                if victim is None:  # purge the oldest reservation that never counted
                    victim = self._oldest_with_status(("DECLINED", "EXPIRED"))
                deleted = None
                if victim is not None:
                    deleted = victim.rid
                    if victim.status == "INIT":
                        self._delete(victim, t)
                    else:
                        self._purge(victim, t)
                return {"inserted": new.rid if new is not None else None, "deleted": deleted}
            if collection == "customers":
                rec = self._new_customer(t)
                self._cust_ids.append(rec["customerId"])
                victim = None
                for key in self.t["customers"].key_list():
                    if not self.cust_res.get(key) and key != rec["customerId"]:
                        victim = key
                        break
                if victim is not None:
                    self.t["customers"].delete(victim)
                    self.cust_res.pop(victim, None)
                    self._event("CUSTOMER_EVENT", victim, "DELETE", t)
                return {"inserted": rec["customerId"], "deleted": victim}
            return {"inserted": None, "deleted": None}
