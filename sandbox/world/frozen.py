"""Closed bulk reservations: read from their columns, thawed into a `Res` when touched."""

from __future__ import annotations

import numpy as np

from sandbox.world.bulk_common import (
    PAYERS,
    RES_BASE,
)
from sandbox.world.reservation_state import Res
from sandbox.world.seasons import CATS, CH_CODES

from .billing import (
    Bill,
)
from .clock import dtstr, from_ms
from .states import CANCELLED_STATES, HOLDING, NAMES


class FrozenMixin:
    """Closed bulk reservations: read from their columns, thawed into a `Res` when touched."""

    # thawing -----------------------------------------------------------------------------------
    def _frozen_pos(self, rid: int) -> int:
        """Position of a closed (not yet thawed) bulk reservation, or -1."""
        fz = getattr(self, "_fz", None)
        if fz is None or not isinstance(rid, int):
            return -1
        j = rid - RES_BASE
        if 0 <= j < len(fz.live) and not fz.live[j]:
            blk = self.t["reservations"].block
            if blk is not None and blk.pos(rid) >= 0:
                return j
        return -1

    def _res(self, rid: int) -> Res | None:
        """The reservation's `Res`, thawing a closed bulk one."""
        r = self.res.get(rid)
        if r is None and self._frozen_pos(rid) >= 0:
            r = self._thaw(rid)
        return r

    def _res_if(self, rid: int, statuses: tuple[str, ...]) -> Res | None:
        """`_res(rid)`, but a frozen one is thawed only when its status is in `statuses`."""
        r = self.res.get(rid)
        if r is not None:
            return r
        j = self._frozen_pos(rid)
        if j >= 0 and NAMES[int(self._fz.status[j])] in statuses:
            return self._thaw(rid)
        return None

    def _thaw(self, rid: int) -> Res:
        fz = self._fz
        j = rid - RES_BASE
        r = Res()
        r.rid = rid
        r.ti = self.types[int(fz.tidx[j])]
        r.unit = int(fz.unit[j])
        r.arr = int(fz.arr[j])
        r.dep = int(fz.dep[j])
        r.ch = self.channels[CH_CODES[int(fz.ch[j])]]
        r.rt = r.ch.rate_type_id
        r.category = CATS[int(fz.cat[j])]
        r.status = NAMES[int(fz.status[j])]
        r.created = from_ms(int(fz.t0[j]))
        r.persons = int(fz.persons[j])
        r.pets = int(fz.pets[j])
        r.discount_pct = int(fz.disc[j])
        r.rent_payer = PAYERS[int(fz.payer[j])]
        r.rec = self.t["reservations"].thaw(rid)
        r.cust = r.rec["customerId"]
        rrs = self.t["reservedresources"]
        for n_, key in enumerate(rrs.child_keys(rid)):
            rec = rrs.thaw(key)
            if n_ == 0:
                r.acc_rr = rec
            else:
                r.extra_rrs[rec["code"]] = rec
        lines = self.t["billlines"]
        r.bills["CUSTOMER"] = None  # type: ignore[assignment]  # keeps the customer bill first
        for key in lines.child_keys(rid):
            ln = lines.thaw(key)
            payer = ln["payerType"]
            bill = r.bills.get(payer)
            if bill is None:
                # a cancelled booking earns no commission (cancellation.py)
                cancelled = r.status in CANCELLED_STATES
                pct = r.ch.commission if payer != "CUSTOMER" and not cancelled else 0
                bill = r.bills[payer] = Bill(ln["reservationBillId"], payer, pct)
            code = ln["billLineType"]
            if code in (10, 20, 190, 250):
                c = round(ln["total"] * 100)
                bill.items.append(ln)
                bill.total += c
                if code == 250:
                    bill.tax += c
                bill.vat += round(c * ln["vatRate"] / (100 + ln["vatRate"]))
            else:
                bill.summary[code] = ln
                if code == 80:
                    bill.paid = round(ln["total"] * 100)
        for bill in r.bills.values():
            self._refresh_bill(bill)
        lo, hi = int(fz.hist_off[j]), int(fz.hist_off[j + 1])
        r.hist = [
            (from_ms(int(t)), NAMES[int(s_)])
            for t, s_ in zip(fz.hist_t[lo:hi].tolist(), fz.hist_s[lo:hi].tolist(), strict=True)
        ]
        r.holding = r.status in HOLDING
        if r.status in CANCELLED_STATES:
            r.cancelled_value = int(fz.cancel_value[j])
        fz.live[j] = True
        self.res[rid] = r
        return r

    def _frozen_history(self, rid: int) -> list[tuple[str, str]] | None:
        j = self._frozen_pos(rid)
        if j < 0:
            return None
        fz = self._fz
        lo, hi = int(fz.hist_off[j]), int(fz.hist_off[j + 1])
        return [
            (dtstr(from_ms(int(t))), NAMES[int(s_)])
            for t, s_ in zip(fz.hist_t[lo:hi].tolist(), fz.hist_s[lo:hi].tolist(), strict=True)
        ]

    def _frozen_rows(self) -> np.ndarray:
        """Positions of the closed bulk reservations still frozen and not deleted."""
        fz = getattr(self, "_fz", None)
        if fz is None:
            return np.zeros(0, dtype=np.int64)
        blk = self.t["reservations"].block
        assert blk is not None
        return np.flatnonzero(~fz.live & blk.alive[: len(fz.live)])
