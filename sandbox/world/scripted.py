"""The scripted API of the world: create and update reservations as a client would."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sandbox.protocol import WorldError
from sandbox.world.reservation_state import EXPIRY

from .clock import dtstr, parse_date, parse_datetime
from .reference import ADDONS, CATEGORIES
from .states import CODES, NAMES


class ScriptedMixin:
    """The scripted API of the world: create and update reservations as a client would."""

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
