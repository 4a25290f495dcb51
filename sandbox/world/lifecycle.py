"""A reservation's life: the state machine, its time-driven steps and stay changes."""

from __future__ import annotations

import heapq
from datetime import datetime
from typing import Any

from sandbox.protocol import WorldError
from sandbox.world.reservation_state import Res

from .clock import at, dstr, dtstr, ms
from .states import CANCELLED_STATES, CODES, HELD, HOLDING, ON_BOOKS, legal


class LifecycleMixin:
    """A reservation's life: the state machine, its time-driven steps and stay changes."""

    # the state machine -----------------------------------------------------------------------
    def _move(self, r: Res, dst: str, t: datetime) -> None:
        src = r.status
        if not legal(src, dst):
            raise WorldError(f"illegal status move {src} -> {dst} for reservation {r.rid}")
        if dst in HOLDING and not r.holding:
            self._hold(r, t)  # raises when the unit is gone; nothing has changed yet
        r.status = dst
        r.hist.append((t, dst))
        rec = r.rec
        rec["status"] = CODES[dst]
        rec["modifiedDate"] = dtstr(t)
        if dst in CANCELLED_STATES and rec["cancelDate"] is None:
            rec["cancelDate"] = dtstr(t)
        if dst not in HOLDING and r.holding:
            self._release(r, t)
        if src in CANCELLED_STATES and dst in ON_BOOKS:
            self._reinstate(r, t)  # the guest rebooks: the stay is billed again
        if src not in ON_BOOKS and dst in ON_BOOKS:
            self._post(r, self._items(r), 1, t, "booking")
        elif src in ON_BOOKS and dst not in ON_BOOKS:
            self._post(r, self._items(r), -1, t, "reversal")
        if dst in ON_BOOKS or dst == "CHECKED_OUT":
            rec["validationStatus"] = 21
        self._event("RESERVATION_EVENT", r.rid, "UPDATE", t)
        self._hook("status_change", r, t, previousStatus=CODES[src])
        if src in ON_BOOKS and dst in CANCELLED_STATES:
            self._compensate(r, t)  # the policy's compensation replaces the booked items
        elif src in CANCELLED_STATES and dst in ON_BOOKS:
            self._bill_changed(r, t)
        self.n_moves += 1

    def _ensure_unit(self, r: Res) -> None:
        """A quotation does not hold its unit; on confirmation find it one (or fail)."""
        if r.holding:
            return
        u = self._free_unit(r.ti, r.arr, r.dep - r.arr, prefer=r.unit, ignore=r.rid)
        if u is None:
            raise WorldError(f"no unit of type {r.ti.resource_id} is available any more")
        if u != r.unit:
            self._set_unit(r, u)

    def _paid(self, r: Res) -> int:
        return sum(b.paid for b in r.bills.values())

    def _delete(self, r: Res, t: datetime) -> None:
        self._move(r, "DELETED", t)
        self._purge(r, t)

    def _purge(self, r: Res, t: datetime) -> None:
        """Housekeeping removal of a never-counted reservation (no status move involved)."""
        rid = r.rid
        for name in ("reservedresources", "billlines", "subjects"):
            tbl = self.t[name]
            for key in tbl.child_keys(rid):
                tbl.delete(key)
        self.t["reservations"].delete(rid)
        del self.res[rid]
        lst = self.cust_res.get(r.cust)
        if lst is not None and rid in lst:
            lst.remove(rid)
        self.deleted.append((rid, r.hist))
        self._event("RESERVATION_EVENT", rid, "DELETE", t)

    # time-driven steps (plans) ---------------------------------------------------------------
    def _schedule(self, t: datetime, rid: int, action: str, arg: Any = None) -> None:
        self._seq += 1
        heapq.heappush(self.heap, (ms(t), self._seq, rid, action, arg))

    def _schedule_stay(self, r: Res) -> None:
        """Arrival and departure steps; they re-check the dates so stay changes are safe."""
        self._schedule(at(r.arr, 15 + (r.rid % 300) / 60), r.rid, "arrive", r.arr)
        self._schedule(at(r.dep, 9 + (r.rid % 90) / 60), r.rid, "depart", r.dep)

    def _step(self, r: Res, action: str, arg: Any, t: datetime) -> bool:
        """Run one planned step if it still applies; False when it no longer does."""
        st = r.status
        try:
            if action == "confirm":
                if st in HELD or st == "QUOTATION":
                    self._ensure_unit(r)
                    self._move(r, "PROVISIONAL", t)
                    return True
            elif action == "pay":
                if st in ("PROVISIONAL", "DEFINITIVE", "CHECKED_IN"):
                    payer, frac = arg
                    bill = r.bills.get(payer)
                    if bill is None:
                        return False
                    amount = None if frac >= 1 else round(bill.total * frac)
                    if self._pay(r, payer, amount, t) and r.status == "PROVISIONAL":
                        self._move(r, "DEFINITIVE", t)
                    return True
            elif action == "cancel":
                if st in ("PROVISIONAL", "DEFINITIVE"):
                    self._move(r, "CANCELLED", t)
                    return True
            elif action == "defcancel":
                if st == "CANCELLED":
                    self._move(r, "DEF_CANCELLED", t)
                    return True
            elif action == "decline":
                if st in HELD or st in ("QUOTATION", "PROVISIONAL"):
                    self._move(r, "DECLINED", t)
                    return True
            elif action == "expire":
                if st in ("OPTIONAL", "QUOTATION"):
                    self._move(r, "EXPIRED", t)
                    return True
                if st == "REQUEST":
                    self._move(r, "DECLINED", t)
                    return True
            elif action == "arrive":
                if arg != r.arr:
                    return False
                if st in ("OPTIONAL", "QUOTATION", "REQUEST"):
                    return self._step(r, "expire", None, t)
                if st == "PROVISIONAL":
                    for payer in r.bills:
                        self._pay(r, payer, None, t)
                    self._move(r, "DEFINITIVE", t)
                    st = "DEFINITIVE"
                if st == "DEFINITIVE":
                    for payer in r.bills:
                        self._pay(r, payer, None, t)
                    self._move(r, "CHECKED_IN", t)
                    return True
            elif action == "depart":
                if arg == r.dep and st == "CHECKED_IN":
                    self._move(r, "CHECKED_OUT", t)
                    return True
            elif action == "book":
                if st == "INIT":
                    self._move(r, "PROVISIONAL", t)
                    self._run_steps(r, self._plan_after_confirm(r, t))
                    return True
            elif action == "delete":
                if st == "INIT":
                    self._delete(r, t)
                    return True
            elif action == "payall" and st in ("PROVISIONAL", "DEFINITIVE"):
                for payer in r.bills:
                    self._pay(r, payer, None, t)
                if r.status == "PROVISIONAL":
                    self._move(r, "DEFINITIVE", t)
                return True
        except WorldError:
            # the world moved on (unit taken by a scripted booking, ...): the plan lapses
            if action == "confirm" and r.status in ("QUOTATION", "OPTIONAL", "REQUEST"):
                self._move(r, "DECLINED", t)
            return False
        return False

    # stay changes ---------------------------------------------------------------------------
    def _extend(self, r: Res, nights: int, t: datetime) -> bool:
        if r.status not in ("OPTIONAL", "REQUEST", "PROVISIONAL", "DEFINITIVE", "CHECKED_IN"):
            return False
        if not r.holding or not self._unit_free(r.unit, r.dep, nights):
            return False
        if (
            self.nightly(r.ti.idx, r.rt, r.dep, nights) is None
            and r.acc_rr["overrideValue"] is None
        ):
            return False
        old_dep = r.dep
        lo = old_dep - self.ord0
        self.occ[r.unit, lo : lo + nights] = r.rid
        r.dep = old_dep + nights
        ov = r.acc_rr["overrideValue"]
        lines = self._stay_items(
            r, old_dep, nights, initial=False, override=round(ov * 100) if ov is not None else None
        )
        for b in r.bills.values():
            self._refresh_bill(b)
        rec = r.rec
        rec["departureDate"] = dstr(r.dep)
        r.acc_rr["endDate"] = dstr(r.dep)
        for rr in r.extra_rrs.values():
            rr["endDate"] = dstr(r.dep)
        r.touch(t)
        if r.status in ON_BOOKS:
            self._post(r, lines, 1, t, "stay extension")
        self._schedule(at(r.dep, 9 + (r.rid % 90) / 60), r.rid, "depart", r.dep)
        self._event("RESERVATION_EVENT", r.rid, "UPDATE", t)
        self._event("AVAILABILITY_EVENT", r.ti.resource_id, "UPDATE", t)
        self._hook(
            "stay_period_change",
            r,
            t,
            previousArrivalDate=dstr(r.arr),
            previousDepartureDate=dstr(old_dep),
        )
        self._hook(
            "bill_change",
            r,
            t,
            amount=sum(b.total for b in r.bills.values()) / 100,
            currencyCode=r.ch.currency,
        )
        self.n_extended += 1
        return True
