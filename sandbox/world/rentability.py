"""Rentability and reservability: which stays an accommodation type can be sold as (allowed
arrival weekdays and a minimum stay per period), and whether it can be reserved at all
(served as `/rentability/sets`, `/rentability/config`, `/rentability/stays` and
`/resourcereservability`, docs/sandbox.md).

A rentability set is a rule: the weekdays a stay may arrive on and its minimum and maximum
length. A config links a type (resourceType ACCOMMODATIONTYPE) to a set for the arrival dates
`startDate` <= A < `endDate`, for every channel (distributionChannelId null). The world's demand
predates the rules (its generated stays ignore them); they decide which unsold nights a new stay
can still fill (`marts.orphan_nights`).

Every draw comes from the world's own rentability sub-generator (`RENTABILITY_STREAM`), made
after the rest of the world. Under `advance`, parks change a type's rule for a future period
(RENTABILITY_EVENT for the type) and open or close a type for online booking
(RESERVABILITY_EVENT, entityType ACCOMMODATIONTYPE).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from .clock import dstr, dtstr, ms

RENTABILITY_STREAM = 0x4E47  # the sub-generator's key beside the seed
WEEKDAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")
# set id, name, arrival weekdays (Monday = 0), minimum and maximum nights
SETS = (
    (1, "Any day, 2 nights", (0, 1, 2, 3, 4, 5, 6), 2, 28),
    (2, "Monday or Friday, 3 nights", (0, 4), 3, 28),
    (3, "Saturday, a week", (5,), 7, 21),
    (4, "Friday, 2 nights", (4,), 2, 14),
)
PERIOD_DAYS = 91  # config periods (about a season)
HISTORY_DAYS = 365
FUTURE_DAYS = 450
RATES_PER_DAY = {"rule": 1.0, "reservability": 0.5}  # per 10 types


class RentabilityMixin:
    """The rentability and reservability areas of the world (see the module docstring)."""

    def _build_rentability(self) -> None:
        self.rent_rng = np.random.default_rng([self.seed, RENTABILITY_STREAM])
        self._rent_due: list[tuple[datetime, str]] = []
        rng = self.rent_rng
        stamp = dtstr(ms(self.now - timedelta(days=400)))
        for sid, name, days, least, most in SETS:
            self.t["rentabilitysets"].add(
                {
                    "rentabilitySetId": sid,
                    "name": name,
                    "arrivalDays": [WEEKDAYS[d] for d in days],
                    "minDuration": least,
                    "maxDuration": most,
                }
            )
        now_ord = self.now.toordinal()
        for ti in self.types:
            start = now_ord - HISTORY_DAYS
            while start < now_ord + FUTURE_DAYS:
                sid = int(rng.integers(1, len(SETS) + 1))
                self._add_config(ti.resource_id, sid, start, start + PERIOD_DAYS, stamp)
                start += PERIOD_DAYS
            self.t["reservability"].add(
                {
                    "reservabilityId": ti.idx + 1,
                    "resourceId": ti.resource_id,
                    "resourceType": "ACCOMMODATIONTYPE",
                    "reservable": True,
                    "reservableOnInternet": bool(rng.random() < 0.9),
                    "modifiedDate": stamp,
                }
            )

    def _add_config(self, resource_id: int, sid: int, start: int, end: int, stamp: str) -> None:
        tbl = self.t["rentabilityconfig"]
        tbl.add(
            {
                "rentabilityConfigId": tbl.new_id(),
                "resourceId": resource_id,
                "resourceType": "ACCOMMODATIONTYPE",
                "distributionChannelId": None,
                "rentabilitySetId": sid,
                "startDate": dstr(start),
                "endDate": dstr(end),
                "modifiedDate": stamp,
            }
        )

    # the stays a type can be sold as (`/rentability/stays`) ----------------------------------
    def rentability_stays(
        self,
        resource_id: int,
        min_arrival: int,
        max_arrival: int,
        min_duration: int = 1,
        max_duration: int = 28,
    ) -> list[dict[str, Any]]:
        """Allowed (arrival, duration) pairs of a type for arrivals min_arrival..max_arrival
        (ordinals, both included), every channel."""
        with self.lock:
            sets = {s["rentabilitySetId"]: s for s in self.t["rentabilitysets"].records()}
            configs = [
                c for c in self.t["rentabilityconfig"].records() if c["resourceId"] == resource_id
            ]
            out: list[dict[str, Any]] = []
            for arrival in range(min_arrival, max_arrival + 1):
                day = dstr(arrival)
                rule = next(
                    (
                        sets[c["rentabilitySetId"]]
                        for c in configs
                        if c["startDate"] <= day < c["endDate"]
                    ),
                    None,
                )
                if rule is None or WEEKDAYS[(arrival - 1) % 7] not in rule["arrivalDays"]:
                    continue
                lo = max(rule["minDuration"], min_duration)
                hi = min(rule["maxDuration"], max_duration)
                for duration in range(lo, hi + 1):
                    out.append(
                        {
                            "resourceId": resource_id,
                            "arrivalDate": day,
                            "duration": duration,
                            "departureDate": dstr(arrival + duration),
                        }
                    )
            return out

    # advance ---------------------------------------------------------------------------------
    def _draw_rentability(self, start: datetime, end: datetime) -> None:
        span = (end - start).total_seconds()
        if span <= 0:
            return
        per10 = len(self.types) / 10
        due = list(self._rent_due)
        for kind, lam in RATES_PER_DAY.items():
            for _ in range(int(self.rent_rng.poisson(lam * per10 * span / 86400))):
                sec = float(self.rent_rng.uniform(0, span))
                due.append((ms(start + timedelta(seconds=sec)), kind))
        due.sort()
        self._rent_due = due

    def _rentability_until(self, t: datetime) -> None:
        while self._rent_due and self._rent_due[0][0] <= t:
            _when, kind = self._rent_due.pop(0)
            getattr(self, f"_rent_{kind}")(self.now)

    def _rent_rule(self, t: datetime) -> None:
        """A park changes the rule of a future period of one type."""
        day = dstr(t.toordinal())
        cands = [c for c in self.t["rentabilityconfig"].records() if c["startDate"] > day]
        if not cands:
            return
        c = cands[int(self.rent_rng.integers(len(cands)))]
        c["rentabilitySetId"] = int(self.rent_rng.integers(1, len(SETS) + 1))
        c["modifiedDate"] = dtstr(t)
        self._event("RENTABILITY_EVENT", c["resourceId"], "UPDATE", t)

    def _rent_reservability(self, t: datetime) -> None:
        recs = self.t["reservability"].records()
        r = recs[int(self.rent_rng.integers(len(recs)))]
        r["reservableOnInternet"] = not r["reservableOnInternet"]
        r["modifiedDate"] = dtstr(t)
        self._event("RESERVABILITY_EVENT", r["resourceId"], "UPDATE", t)
