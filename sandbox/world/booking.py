"""Booking a stay: finding and holding a free unit, and creating the reservation with its bill."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sandbox.protocol import WorldError
from sandbox.world.reservation_state import (
    _RESERVATION,
    _RR,
    _SUBJECT,
    SUBJECTS,
    Res,
)

from .clock import dstr, dtstr
from .reference import ADDONS, CATEGORIES, Channel, TypeInfo
from .states import CODES, HOLDING, ON_BOOKS


class BookingMixin:
    """Booking a stay: finding and holding a free unit, and creating the reservation with its bill."""

    # units -----------------------------------------------------------------------------------
    def _in_horizon(self, first: int, nights: int) -> bool:
        return first >= self.ord0 and first + nights <= self.ord_end

    def _unit_free(self, u: int, first: int, nights: int, ignore: int = 0) -> bool:
        if self.unit_setup[u] > first or self.unit_arch[u] < first + nights:
            return False
        if not self._in_horizon(first, nights):
            return False
        lo = first - self.ord0
        seg = self.occ[u, lo : lo + nights]
        if ignore:
            return bool(((seg == 0) | (seg == ignore)).all())
        return not seg.any()

    def _free_unit(
        self, ti: TypeInfo, first: int, nights: int, prefer: int | None = None, ignore: int = 0
    ) -> int | None:
        if prefer is not None and self._unit_free(prefer, first, nights, ignore):
            return prefer
        for u in ti.units:
            if self._unit_free(u, first, nights, ignore):
                return u
        return None

    def _hold(self, r: Res, t: datetime) -> None:
        if not self._unit_free(r.unit, r.arr, r.dep - r.arr, r.rid):
            raise WorldError(f"unit {self.unit_ids[r.unit]} is not available")
        lo = r.arr - self.ord0
        self.occ[r.unit, lo : lo + r.dep - r.arr] = r.rid
        r.holding = True
        self._event("AVAILABILITY_EVENT", r.ti.resource_id, "UPDATE", t)

    def _release(self, r: Res, t: datetime) -> None:
        if not r.holding:
            return
        lo = r.arr - self.ord0
        seg = self.occ[r.unit, lo : lo + r.dep - r.arr]
        seg[seg == r.rid] = 0
        r.holding = False
        self._event("AVAILABILITY_EVENT", r.ti.resource_id, "UPDATE", t)

    def _set_unit(self, r: Res, u: int) -> None:
        r.unit = u
        r.acc_rr["unitId"] = self.unit_ids[u]

    # creation ----------------------------------------------------------------------------------
    def _book(
        self,
        t: datetime,
        ti: TypeInfo,
        unit: int,
        arr: int,
        dep: int,
        ch: Channel,
        category: str,
        status: str,
        cust_id: int,
        groups: list[tuple[int, int]],
        pets: int,
        extras: dict[str, int],
        discount_pct: int,
        paying: bool,
        override: int | None = None,
        rt: int | None = None,
        rid: int | None = None,
    ) -> Res:
        """Create one reservation with its reserved resources, subjects and bills."""
        if status in HOLDING and not self._unit_free(unit, arr, dep - arr):
            raise WorldError(f"unit {self.unit_ids[unit]} is not available")
        tbl = self.t["reservations"]
        r = Res()
        bulk = rid is not None  # a stay of the bulk history: its key is in the frozen block
        if rid is None:
            rid = tbl.new_id()
        r.rid = rid
        r.ti, r.unit, r.arr, r.dep, r.ch = ti, unit, arr, dep, ch
        r.rt = rt or ch.rate_type_id
        r.category = category
        r.status = status
        r.cust = cust_id
        r.created = t
        r.persons = sum(q for _, q in groups)
        r.pets = pets
        r.discount_pct = discount_pct
        r.rent_payer = "AGENT" if ch.commission else ("PAYING_CUSTOMER" if paying else "CUSTOMER")
        cat_id, cat_name, rtype = CATEGORIES[category]
        stamp = dtstr(t)
        r.rec = _RESERVATION(
            rid,
            f"{ti.location_id:03d}{rid:08d}",
            cat_id,
            category,
            cat_name,
            rtype,
            CODES[status],
            dstr(arr),
            dstr(dep),
            None,
            None,
            cust_id,
            ch.channel_id,
            ch.code,
            ti.location_id,
            stamp,
            stamp,
            None,
            f"{ch.code}-{rid}" if ch.commission else None,
            0,
        )
        if bulk:
            assert tbl.block is not None
            tbl.block.put(rid, r.rec)
        else:
            tbl.add(r.rec)
        rrs = self.t["reservedresources"]
        r.acc_rr = rrs.add(
            _RR(
                rrs.new_id(),
                rid,
                ti.resource_id,
                self.unit_ids[unit],
                r.rt,
                "ACCOMMODATIONTYPE",
                ti.code,
                f"{ti.kind.replace('_', ' ').title()} {ti.persons}p",
                1,
                dstr(arr),
                dstr(dep),
                "BOOKED",
                override / 100 if override is not None else None,
            )
        )
        for code, qty in extras.items():
            if qty <= 0:
                continue
            aid, name, _p, _v, _per = ADDONS[code]
            r.extra_rrs[code] = rrs.add(
                _RR(
                    rrs.new_id(),
                    rid,
                    aid,
                    None,
                    None,
                    "EXTRA",
                    code,
                    name,
                    qty,
                    dstr(arr),
                    dstr(dep),
                    "BOOKED",
                    None,
                )
            )
        subj = self.t["subjects"]
        for sid, q in groups:
            _s, typ, a0, a1 = SUBJECTS[sid - 1]
            subj.add(_SUBJECT(subj.new_id(), rid, sid, typ, a0, a1, q))
        if pets:
            subj.add(_SUBJECT(subj.new_id(), rid, 4, "PET", None, None, pets))
        self._build_bills(r, override)
        self.res[rid] = r
        if not bulk:  # the bulk history fills cust_res itself, in rid order
            self.cust_res.setdefault(cust_id, []).append(rid)
        r.hist.append((t, status))
        self._event("RESERVATION_EVENT", rid, "CREATE", t)
        if status in HOLDING:
            self._hold(r, t)
        if status in ON_BOOKS:
            self._post(r, self._items(r), 1, t, "booking")
        self._hook("status_change", r, t, previousStatus=None)
        self.n_created += 1
        return r

    def _items(self, r: Res) -> list[dict[str, Any]]:
        return [ln for b in r.bills.values() for ln in b.items]
