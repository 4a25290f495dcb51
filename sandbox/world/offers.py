"""Offers with their rates, additions and implies, and their changes (OFFER_EVENT, ADDITION_EVENT,
IMPLY_EVENT) - docs/sandbox.md "Offers, additions, implies".

Offers are resources of type SPECIAL. The early-booking discount the bills already carry (a
RESERVED_RESOURCE line with `resourceId` 900009 and `resourceType` SPECIAL, `reference.ADDONS`)
is the offer EARLYBIRD: its bill lines name the offer by that resourceId, so the bills stay as
they were. Two more offers are on sale but no stay of this world books them. Each offer has
RELATIVE rates (a percentage off the rent, per rate type, with the booking-to-arrival window
that qualifies) and may imply a mandatory cost.

Additions are the add-ons a guest may add to an accommodation type or an offer (optional, with
a maximum quantity); implies are the mandatory costs a resource brings along (an accommodation
type, an add-on, an offer or a unit implies an add-on). Neither changes a bill: the bills were
drawn before them, as the add-ons' prices.

Every draw comes from a stream of its own (`OFFER_SEED`), after the rest of the world, so the
other collections of every seed are byte-identical to a world without these areas. Under
`advance` an offer changes (description, bookable online), a promotion offer is created and later
withdrawn (a DELETE), an addition's maximum changes or one is added or removed, an imply is added
or removed; each change emits its event naming the holder (entityType says which kind).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from .clock import dstr, ms
from .reference import ADDONS

OFFER_SEED = 0x0FF  # the offers' own random stream: (seed, OFFER_SEED)
CHANGES_PER_DAY = {"offer": 0.3, "promo": 0.1, "addition": 0.4, "imply": 0.2}  # per world
PROMO_FIRST_ID = 900101  # promotions created under `advance`
# code: (resourceId, name, percent off the rent, min days booked ahead, max days ahead, rate types)
OFFERS = {
    "EARLYBIRD": (ADDONS["EARLYBIRD"][0], "Early booking discount", 10, 120, None, (1, 2)),
    "LASTMINUTE": (900010, "Last minute deal", 15, None, 7, (1, 2)),
    "MIDWEEK": (900011, "Midweek break", 20, None, None, (1,)),
}
ENTITY = {"accommodationtypes": "ACCOMMODATIONTYPE", "addons": "ADDON", "offers": "OFFER"}
DESCRIPTIONS = ("Limited availability", "Book now", "While stocks last", "Selected parks only")


class OffersMixin:
    """The offers, additions and implies of the world (see the module docstring)."""

    def _build_offers(self, far_past: int) -> None:
        self._offer_rng = np.random.default_rng([self.seed, OFFER_SEED])
        self._promo_next = PROMO_FIRST_ID
        for code, (rid, name, pct, ahead_min, ahead_max, rts) in OFFERS.items():
            self._add_offer(code, rid, name, pct, ahead_min, ahead_max, rts, far_past)
        rng = self._offer_rng
        extras = ("LINEN", "CLEANING", "PETS")
        for ti in self.types:
            for code in extras:
                if rng.random() < 0.7:
                    self._add_addition("typeadditions", ti.resource_id, code, far_past)
            self._add_imply("implies", ti.resource_id, "ACCOMMODATIONTYPE", "CLEANING", far_past)
        for code in ("EARLYBIRD", "LASTMINUTE"):
            self._add_addition("offeradditions", OFFERS[code][0], "LINEN", far_past)
        self._add_imply("implies", OFFERS["LASTMINUTE"][0], "OFFER", "CLEANING", far_past)
        self._add_imply("implies", ADDONS["PETS"][0], "ADDON", "CLEANING", far_past)
        for uid in self.t["units"].key_list():
            if rng.random() < 0.1:
                self._add_imply("unitimplies", int(uid), "UNIT", "LINEN", far_past)

    def _add_offer(
        self,
        code: str,
        rid: int,
        name: str,
        pct: int,
        ahead_min: int | None,
        ahead_max: int | None,
        rate_types: tuple[int, ...],
        valid_from: int,
        valid_to: int | None = None,
    ) -> dict[str, Any]:
        rates = []
        first_rate = self.t["offerrates"].next_id
        for i, rt in enumerate(rate_types):
            rates.append(
                {
                    "rateId": first_rate + i,
                    "resourceId": rid,
                    "rateTypeId": rt,
                    "rateTypeIds": [rt],
                    "value": float(-pct),
                    "quantifier": "RELATIVE",
                    "valueType": "single",
                    "priority": 10,
                    "validFrom": dstr(valid_from),
                    "validTo": dstr(valid_to) if valid_to is not None else None,
                    "bookdateFrom": None,
                    "bookdateTo": None,
                    "minDeviation": ahead_min,
                    "maxDeviation": ahead_max,
                    "minDuration": None,
                    "maxDuration": None,
                    "status": 1,
                }
            )
        for r in rates:
            self.t["offerrates"].add(dict(r))
        return self.t["offers"].add(
            {
                "resourceId": rid,
                "code": code,
                "name": name,
                "type": "SPECIAL",
                "description": name,
                "discountPercentage": float(pct),
                "minDaysBeforeArrival": ahead_min,
                "maxDaysBeforeArrival": ahead_max,
                "rateTypeIds": list(rate_types),
                "choosableOnInternet": True,
                "validFrom": dstr(valid_from),
                "validTo": dstr(valid_to) if valid_to is not None else None,
                "archivedFrom": None,
                "rates": rates,
            }
        )

    def _add_addition(self, collection: str, holder: int, addon: str, since: int) -> None:
        tbl = self.t[collection]
        tbl.add(
            {
                "additionId": tbl.new_id(),
                "resourceId": holder,
                "addonResourceId": ADDONS[addon][0],
                "addonCode": addon,
                "mandatory": False,
                "maxQuantity": int(self._offer_rng.integers(1, 5)),
                "validFrom": dstr(since),
                "validTo": None,
            }
        )

    def _add_imply(self, collection: str, holder: int, kind: str, addon: str, since: int) -> None:
        tbl = self.t[collection]
        link = "unitId" if collection == "unitimplies" else "resourceId"
        tbl.add(
            {
                "implyId": tbl.new_id(),
                link: holder,
                "holderType": kind,
                "impliedResourceId": ADDONS[addon][0],
                "impliedCode": addon,
                "quantity": 1,
                "validFrom": dstr(since),
                "validTo": None,
            }
        )

    # advance ---------------------------------------------------------------------------------
    def _draw_offer_changes(self, start: datetime, end: datetime) -> list[tuple[datetime, str]]:
        span = (end - start).total_seconds()
        if span <= 0:
            return []
        rng = self._offer_rng
        out = []
        for kind, lam in CHANGES_PER_DAY.items():
            for _ in range(int(rng.poisson(lam * span / 86400))):
                out.append((ms(start + timedelta(seconds=float(rng.uniform(0, span)))), kind))
        return sorted(out)

    def _offer_area_change(self, kind: str, t: datetime) -> None:
        getattr(self, f"_change_{kind}")(t)

    def _change_offer(self, t: datetime) -> None:
        rng = self._offer_rng
        offers = list(self.t["offers"].records())
        rec = offers[int(rng.integers(0, len(offers)))]
        if rng.random() < 0.5:
            rec["choosableOnInternet"] = not rec["choosableOnInternet"]
        else:
            rec["description"] = f"{rec['name']}: {DESCRIPTIONS[int(rng.integers(0, 4))]}"
        self._event("OFFER_EVENT", rec["resourceId"], "UPDATE", t, entity_type="OFFER")

    def _change_promo(self, t: datetime) -> None:
        """A promotion offer is created for a few weeks, or the oldest one is withdrawn."""
        promos = [r for r in self.t["offers"].records() if r["resourceId"] >= PROMO_FIRST_ID]
        if promos and (len(promos) >= 3 or self._offer_rng.random() < 0.4):
            rid = promos[0]["resourceId"]
            for rate in list(self.t["offerrates"].children(rid)):
                self.t["offerrates"].delete(rate["rateId"])
            additions = list(self.t["offeradditions"].children(rid))
            for add in additions:
                self.t["offeradditions"].delete(add["additionId"])
            self.t["offers"].delete(rid)
            self._event("OFFER_EVENT", rid, "DELETE", t, entity_type="OFFER")
            if additions:  # its additions go with it: a change to additions of its own
                self._event("ADDITION_EVENT", rid, "DELETE", t, entity_type="OFFER")
            return
        rid = self._promo_next
        self._promo_next += 1
        day = t.toordinal()
        pct = int(self._offer_rng.choice([5, 10, 15]))
        self._add_offer(
            f"PROMO{rid}", rid, f"Promotion {rid}", pct, None, None, (1, 2), day, day + 28
        )
        self._add_addition("offeradditions", rid, "LINEN", day)
        self._event("OFFER_EVENT", rid, "UPDATE", t, entity_type="OFFER")
        self._event("ADDITION_EVENT", rid, "UPDATE", t, entity_type="OFFER")

    def _change_addition(self, t: datetime) -> None:
        rng = self._offer_rng
        recs = list(self.t["typeadditions"].records())
        roll = rng.random()
        if roll < 0.6 and recs:
            rec = recs[int(rng.integers(0, len(recs)))]
            rec["maxQuantity"] = int(rng.integers(1, 5))
            holder = rec["resourceId"]
        elif roll < 0.8 and recs:
            rec = recs[int(rng.integers(0, len(recs)))]
            holder = rec["resourceId"]
            self.t["typeadditions"].delete(rec["additionId"])
        else:
            ti = self.types[int(rng.integers(0, len(self.types)))]
            holder = ti.resource_id
            self._add_addition("typeadditions", holder, "LINEN", t.toordinal())
        self._event("ADDITION_EVENT", holder, "UPDATE", t, entity_type="ACCOMMODATIONTYPE")

    def _change_imply(self, t: datetime) -> None:
        rng = self._offer_rng
        if rng.random() < 0.5:
            uids = self.t["units"].key_list()
            uid = int(uids[int(rng.integers(0, len(uids)))])
            have = self.t["unitimplies"].children(uid)
            if have:
                self.t["unitimplies"].delete(have[0]["implyId"])
            else:
                self._add_imply("unitimplies", uid, "UNIT", "LINEN", t.toordinal())
            self._event("IMPLY_EVENT", uid, "UPDATE", t, entity_type="UNIT")
            return
        ti = self.types[int(rng.integers(0, len(self.types)))]
        have = [r for r in self.t["implies"].children(ti.resource_id) if r["impliedCode"] == "PETS"]
        if have:
            self.t["implies"].delete(have[0]["implyId"])
        else:
            self._add_imply("implies", ti.resource_id, "ACCOMMODATIONTYPE", "PETS", t.toordinal())
        self._event("IMPLY_EVENT", ti.resource_id, "UPDATE", t, entity_type="ACCOMMODATIONTYPE")
