"""Reservations: creation, the state machine, unit holds, stay changes and the scripted API."""

from __future__ import annotations

import heapq
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from sandbox.protocol import WorldError
from sandbox.world.block import record_factory

from .clock import at, dstr, dtstr, ms, parse_date, parse_datetime
from .reference import ADDONS, CATEGORIES, Channel, TypeInfo
from .states import CANCELLED_STATES, CODES, HELD, HOLDING, NAMES, ON_BOOKS, legal

EXPIRY = timedelta(days=7)  # OPTIONAL / QUOTATION expire when not confirmed within this
CANCEL_KEEP_PCT = 30  # compensation kept on cancellation
SUBJECTS = (  # subjectId, type, ageFrom, ageTo
    (1, "PERSON", 18, None),
    (2, "PERSON", 3, 17),
    (3, "PERSON", 0, 2),
)


RESERVED_RESOURCE_FIELDS = (
    "reservedResourceId",
    "reservationId",
    "resourceId",
    "unitId",
    "rateTypeId",
    "type",
    "code",
    "name",
    "quantity",
    "startDate",
    "endDate",
    "statusName",
    "overrideValue",
)
_RR = record_factory("ReservedResource", RESERVED_RESOURCE_FIELDS)

RESERVATION_FIELDS = (
    "reservationId",
    "reservationNumber",
    "reservationCategoryId",
    "categoryCode",
    "categoryName",
    "type",
    "status",
    "arrivalDate",
    "departureDate",
    "expectedArrivalDateTime",
    "expectedDepartureDateTime",
    "customerId",
    "distributionChannelId",
    "distributionChannelCode",
    "locationId",
    "reservationDate",
    "modifiedDate",
    "cancelDate",
    "voucher",
    "validationStatus",
)
_RESERVATION = record_factory("Reservation", RESERVATION_FIELDS)
_SUBJECT = record_factory(
    "ReservationSubject",
    ("reservationSubjectId", "reservationId", "subjectId", "type", "ageFrom", "ageTo", "quantity"),
)


class Res:
    """Typed state of one reservation beside its wire record (`rec`)."""

    __slots__ = (
        "acc_rr",
        "arr",
        "autopilot",
        "bills",
        "category",
        "ch",
        "created",
        "cust",
        "dep",
        "discount_pct",
        "extra_rrs",
        "hist",
        "holding",
        "persons",
        "pets",
        "rec",
        "rent_payer",
        "rid",
        "rt",
        "status",
        "ti",
        "unit",
    )

    def __init__(self) -> None:
        self.hist: list[tuple[datetime, str]] = []
        self.bills: dict[str, Any] = {}
        self.extra_rrs: dict[str, dict[str, Any]] = {}
        self.holding = False
        self.autopilot = True

    def touch(self, t: datetime) -> None:
        stamp = dtstr(t)
        if stamp > self.rec["modifiedDate"]:  # never move backwards (ISO strings sort by time)
            self.rec["modifiedDate"] = stamp

    @property
    def guest(self) -> bool:
        return self.category not in ("OWNER", "BLOCK")


class ReservationsMixin:
    """All reservation changes go through `_move` (state table) and `_hold`/`_release` (units)."""

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
        if src not in ON_BOOKS and dst in ON_BOOKS:
            self._post(r, self._items(r), 1, t, "booking")
        elif src in ON_BOOKS and dst not in ON_BOOKS:
            self._post(r, self._items(r), -1, t, "reversal")
        if dst in ON_BOOKS or dst == "CHECKED_OUT":
            rec["validationStatus"] = 21
        self._event("RESERVATION_EVENT", r.rid, "UPDATE", t)
        self._hook("status_change", r, t, previousStatus=CODES[src])
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
                    self._refund(r, CANCEL_KEEP_PCT, t)
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

    # the scripted API -------------------------------------------------------------------------
    def _get_res(self, reservation_id: int) -> Res:
        r = self._res(int(reservation_id))
        if r is None:
            raise WorldError(f"reservation {reservation_id} not found")
        return r

    def create_reservation(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /reservations: validate like the service, hold a unit, bill, return the ids."""
        with self.lock:
            t = self.now
            if not isinstance(body, dict):
                raise WorldError("body must be a JSON object")
            ats = body.get("accommodationTypes")
            if not isinstance(ats, list) or not ats:
                raise WorldError("accommodationTypes is mandatory")
            if len(ats) != 1:
                raise WorldError("the sandbox books one accommodation type per reservation")
            a0 = ats[0]
            if not isinstance(a0, dict):
                raise WorldError("accommodationTypes[0] must be an object")
            try:
                ti = self.type_by_id[int(a0["resourceId"])]
            except (KeyError, TypeError, ValueError):
                raise WorldError("accommodationTypes[].resourceId is missing or unknown") from None
            try:
                nights = int(a0["duration"])
            except (KeyError, TypeError, ValueError):
                raise WorldError("accommodationTypes[].duration is mandatory") from None
            if not 1 <= nights <= 60:
                raise WorldError("duration must be between 1 and 60")
            subjects = a0.get("subjects")
            persons = subjects.get("persons") if isinstance(subjects, dict) else None
            if not isinstance(persons, list) or not persons:
                raise WorldError("accommodationTypes[].subjects.persons is mandatory")
            groups: dict[int, int] = {}
            try:
                for p in persons:
                    age, qty = int(p["age"]), int(p["quantity"])
                    if qty < 1 or age < 0:
                        raise ValueError
                    sid = 1 if age >= 18 else (2 if age >= 3 else 3)
                    groups[sid] = groups.get(sid, 0) + qty
            except (KeyError, TypeError, ValueError):
                raise WorldError(
                    "persons[] need a non-negative age and a positive quantity"
                ) from None
            if sum(groups.values()) > ti.persons:
                raise WorldError(f"accommodation type {ti.resource_id} sleeps {ti.persons}")
            pets = subjects.get("pets", 0) if isinstance(subjects, dict) else 0
            if isinstance(pets, list):
                pets = sum(int(p.get("quantity", 1)) for p in pets)
            pets = int(pets or 0)
            if pets and not ti.pets:
                raise WorldError("pets are not allowed in this accommodation type")
            category = body.get("categoryCode")
            if category not in CATEGORIES:
                raise WorldError(f"unknown categoryCode {category!r}")
            ch = self.channels.get(body.get("distributionChannelCode"))
            if ch is None:
                raise WorldError("unknown distributionChannelCode")
            rt = body.get("rateTypeId")
            if rt is not None and int(rt) != ch.rate_type_id:
                raise WorldError(f"rate type {rt} is not sold through {ch.code}")
            arrival = body.get("arrivalDate", a0.get("arrivalDate"))
            if arrival is None:
                raise WorldError("arrivalDate is mandatory in the sandbox")
            try:
                arr = parse_date(arrival).toordinal()
            except ValueError:
                raise WorldError("arrivalDate must be yyyy-MM-dd") from None
            if arr < t.toordinal():
                raise WorldError("arrivalDate is in the past")
            if not self._in_horizon(arr, nights):
                raise WorldError("the stay is outside the bookable horizon")
            status = body.get("status", "PROVISIONAL")
            if isinstance(status, int):
                status = NAMES.get(status, "?")
            if status not in ("INIT", "OPTIONAL", "QUOTATION", "REQUEST", "PROVISIONAL"):
                raise WorldError(f"a new reservation cannot start as {status}")
            override = a0.get("overrideValue")
            override_c = round(float(override) * 100) if override is not None else None
            if category in ("OWNER", "BLOCK"):
                override_c = None
            elif override_c is None and self.nightly(ti.idx, ch.rate_type_id, arr, nights) is None:
                raise WorldError("no rate for the requested stay")
            prefer = None
            if body.get("unitId") is not None:
                prefer = self.unit_by_id(int(body["unitId"]))
                if prefer is None or int(self.unit_type[prefer]) != ti.idx:
                    raise WorldError("unitId does not belong to the accommodation type")
            u = self._free_unit(ti, arr, nights, prefer=prefer)
            if u is None or (prefer is not None and u != prefer):
                raise WorldError("no unit available for the requested stay")
            cust_id = body.get("customerId")
            if cust_id is not None:
                if self.t["customers"].get(int(cust_id)) is None:
                    raise WorldError(f"customer {cust_id} not found")
                cust_id = int(cust_id)
            elif isinstance(body.get("customer"), dict):
                cust_id = self._new_customer(t, body["customer"])["customerId"]
            else:
                raise WorldError("customer or customerId is mandatory")
            extras: dict[str, int] = {}
            for item in body.get("addOns") or []:
                code = item if isinstance(item, str) else item.get("code")
                if code not in ADDONS or code == "EARLYBIRD":
                    raise WorldError(f"unknown add-on {code!r}")
                qty = 1 if isinstance(item, str) else int(item.get("quantity", 1))
                extras[code] = qty
            if pets:
                extras["PETS"] = pets
            r = self._book(
                t,
                ti,
                u,
                arr,
                arr + nights,
                ch,
                category,
                status,
                cust_id,
                sorted(groups.items()),
                pets,
                extras,
                0,
                bool(body.get("payingCustomer")),
                override_c,
            )
            r.autopilot = bool(body.get("autopilot", True))
            if r.autopilot:
                if status in ("OPTIONAL", "QUOTATION"):
                    self._schedule(t + EXPIRY, r.rid, "expire")
                if status == "INIT":
                    self._schedule(t + timedelta(hours=2), r.rid, "delete")
                self._schedule_stay(r)
            return {
                "reservationId": r.rid,
                "reservationNumber": r.rec["reservationNumber"],
                "status": r.rec["status"],
            }

    def update_reservation(self, reservation_id: int, body: dict[str, Any]) -> dict[str, Any]:
        """PUT /reservations/{id}: an action from the state table and/or expected times."""
        with self.lock:
            t = self.now
            r = self._get_res(reservation_id)
            if not isinstance(body, dict):
                raise WorldError("body must be a JSON object")
            times: dict[str, str] = {}
            for key in ("expectedArrivalDateTime", "expectedDepartureDateTime"):
                if body.get(key) is not None:
                    try:
                        times[key] = dtstr(parse_datetime(body[key]))[:19]
                    except ValueError:
                        raise WorldError(f"{key} must be yyyy-MM-ddTHH:mm:ss") from None
            action = body.get("action")
            if action is None and not times:
                raise WorldError("nothing to update: give an action or expected times")
            st = r.status
            if action is not None:
                if action == "CONFIRM":
                    if st in ("INIT", "OPTIONAL", "QUOTATION", "REQUEST"):
                        if st == "QUOTATION":
                            self._ensure_unit(r)
                        self._move(r, "PROVISIONAL", t)
                    elif st == "CANCELLED":  # the guest rebooks
                        self._ensure_unit(r)
                        self._move(r, "DEFINITIVE" if self._paid(r) else "PROVISIONAL", t)
                    else:
                        raise WorldError(f"CONFIRM is not allowed from {st}")
                elif action == "DECLINE":
                    self._move(r, "DECLINED", t)
                elif action == "CANCEL":
                    if st == "CANCELLED":
                        self._move(r, "DEF_CANCELLED", t)
                    else:
                        self._move(r, "CANCELLED", t)
                        self._refund(r, CANCEL_KEEP_PCT, t)
                elif action in ("CHECKED_IN", "CHECKED_OUT"):
                    self._move(r, action, t)
                elif action == "DELETE":
                    self._delete(r, t)
                    return {"reservationId": r.rid, "status": CODES["DELETED"]}
                else:
                    raise WorldError(f"unknown action {action!r}")
            if times:
                r.rec.update(times)
                r.touch(t)
                if action is None:
                    self._event("RESERVATION_EVENT", r.rid, "UPDATE", t)
            return r.rec

    def pay(
        self, reservation_id: int, amount: float | None = None, payer_type: str | None = None
    ) -> dict[str, Any]:
        """Register a payment (amount in currency units; None = all outstanding)."""
        with self.lock:
            t = self.now
            r = self._get_res(reservation_id)
            if r.status not in ("PROVISIONAL", "DEFINITIVE", "CHECKED_IN"):
                raise WorldError(f"no payments on a {r.status} reservation")
            payers = [payer_type] if payer_type else list(r.bills)
            if payer_type and payer_type not in r.bills:
                raise WorldError(f"reservation {r.rid} has no {payer_type} bill")
            paid = 0
            for p in payers:
                paid += self._pay(r, p, None if amount is None else round(float(amount) * 100), t)
            if paid and r.status == "PROVISIONAL":
                self._move(r, "DEFINITIVE", t)
            return r.rec

    def change_stay(self, reservation_id: int, departure_date: date | str) -> dict[str, Any]:
        """Extend a stay to a later departure (adds bill lines, never reprices booked nights)."""
        with self.lock:
            r = self._get_res(reservation_id)
            dep = parse_date(departure_date).toordinal()
            if dep <= r.dep:
                raise WorldError("only extensions are supported: departure must move later")
            if not self._extend(r, dep - r.dep, self.now):
                raise WorldError("the unit is not available for the extension")
            return r.rec

    def status_history(self, reservation_id: int) -> list[tuple[str, str]]:
        """[(time, status name)] of one reservation, for tests and debugging."""
        with self.lock:
            frozen = self._frozen_history(int(reservation_id))
            if frozen is not None:
                return frozen
            r = self._get_res(reservation_id)
            return [(dtstr(t), s) for t, s in r.hist]

    def unit_by_id(self, unit_id: int) -> int | None:
        u = unit_id - 1
        return u if 0 <= u < len(self.unit_ids) else None

    # availability ------------------------------------------------------------------------------
    def availability(
        self,
        *,
        arrival_from: date,
        arrival_to: date,
        resource_ids: Any = None,
        location_id: int | None = None,
        durations: Any = None,
        rate_type_id: int | None = None,
        distribution_channel_code: str | None = None,
    ) -> list[dict[str, Any]]:
        """Availability records computed from units, holds and rates at call time."""
        with self.lock:
            a0 = parse_date(arrival_from).toordinal()
            a1 = parse_date(arrival_to).toordinal()
            if a1 < a0:
                raise WorldError("arrivalDateTo is before arrivalDateFrom")
            if a1 - a0 + 1 > 31:
                raise WorldError("at most 31 arrival dates per request")
            durs = sorted({int(d) for d in durations}) if durations else [2, 3, 4, 7]
            if any(d < 1 or d > 60 for d in durs):
                raise WorldError("duration must be between 1 and 60")
            rts = list(self.rate_types)
            if distribution_channel_code is not None:
                ch = self.channels.get(distribution_channel_code)
                if ch is None:
                    raise WorldError("unknown distributionChannelCode")
                rts = [ch.rate_type_id]
            if rate_type_id is not None:
                rts = [x for x in rts if x == int(rate_type_id)]
            types = self.types
            if resource_ids:
                wanted = {int(x) for x in resource_ids}
                types = [ti for ti in types if ti.resource_id in wanted]
            if location_id is not None:
                types = [ti for ti in types if ti.location_id == int(location_id)]
            out: list[dict[str, Any]] = []
            maxd = max(durs)
            n_arr = a1 - a0 + 1
            span = n_arr + maxd
            lo = a0 - self.ord0
            for ti in types:
                units = self.units_of_type[ti.idx]
                busy = np.ones((len(units), span), dtype=np.int64)
                s0, s1 = max(lo, 0), min(lo + span, self.ord_end - self.ord0)
                if s1 > s0 and len(units):
                    busy[:, s0 - lo : s1 - lo] = self.occ[units, s0:s1] != 0
                cs = np.concatenate([np.zeros((len(units), 1), np.int64), busy.cumsum(axis=1)], 1)
                setup = self.unit_setup[units]
                arch = self.unit_arch[units]
                pcs = {}
                for rt in rts:
                    p = np.full(span, -1, dtype=np.int64)
                    if s1 > s0:
                        p[s0 - lo : s1 - lo] = self.price[(ti.idx, rt)][s0:s1]
                    neg = np.concatenate([[0], (p < 0).cumsum()])
                    pc = np.concatenate([[0], np.where(p < 0, 0, p).cumsum()])
                    pcs[rt] = (pc, neg)
                for i in range(n_arr):
                    arr = a0 + i
                    for d in durs:
                        free = (cs[:, i + d] - cs[:, i] == 0) & (setup <= arr) & (arch >= arr + d)
                        ids = [self.unit_ids[int(u)] for u in units[free]]
                        prices = []
                        for rt in rts:
                            pc, neg = pcs[rt]
                            if neg[i + d] - neg[i]:
                                continue
                            prices.append(
                                {
                                    "rateTypeId": rt,
                                    "currencyCode": self.rate_types[rt][1],
                                    "price": int(pc[i + d] - pc[i]) / 100,
                                }
                            )
                        out.append(
                            {
                                "resourceId": ti.resource_id,
                                "accommodationKindId": ti.kind_id,
                                "locationId": ti.location_id,
                                "locationCode": ti.location_code,
                                "arrivalDate": dstr(arr),
                                "departureDate": dstr(arr + d),
                                "duration": d,
                                "availableUnits": len(ids) if prices else 0,
                                "units": ids if prices else [],
                                "maxCapacity": ti.persons,
                                "petCapacity": 2 if ti.pets and ids and prices else 0,
                                "prices": prices,
                            }
                        )
            return out
