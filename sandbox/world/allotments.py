"""Allotments: units of an accommodation type held for a tour operator or reseller channel, per
stay period, until a release date (served as `/allotments` and
`/accommodationtypes/{resourceId}/allotments`, docs/sandbox.md).

An allotment holds `quantity` units a night for nights `startDate` <= D < `endDate`; what the
channel has not picked up (its on-the-books guest stays of the type that night) is released
`releaseDays` before the night. The world books no unit for an allotment: it is a contract the
channel sells against, and the pickup is whatever the channel's guests booked.

Every draw comes from the world's own allotment sub-generator (`ALLOTMENT_STREAM`), made after
the rest of the world, so the generated reservations and bills of every seed are unchanged.
Under `advance` the channels adjust future allotments (quantity +-1), contract new periods and
withdraw periods that have not started; each change emits an ALLOTMENT_EVENT for the type.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from .clock import at, dstr, dtstr, ms

ALLOTMENT_STREAM = 0x0A11  # the sub-generator's key beside the seed
CHANNELS = ("TO-GBP", "OTA-EUR")  # the channels that take allotments
PERIOD_DAYS = 28  # one allotment period
HISTORY_DAYS = 360  # periods from this long before the clock ...
FUTURE_DAYS = 300  # ... to this long after it
TYPE_SHARE = 0.5  # share of (type, channel) pairs with allotments
RELEASE_DAYS = (7, 14, 21, 28)
RATES_PER_DAY = {"adjust": 3.0, "contract": 0.5, "withdraw": 0.5}  # per 10 types


class AllotmentsMixin:
    """The allotments area of the world (see the module docstring)."""

    def _build_allotments(self) -> None:
        self.allot_rng = np.random.default_rng([self.seed, ALLOTMENT_STREAM])
        self._allot_due: list[tuple[datetime, str]] = []
        rng = self.allot_rng
        now_ord = self.now.toordinal()
        first = now_ord - HISTORY_DAYS
        for ti in self.types:
            for code in CHANNELS:
                if rng.random() >= TYPE_SHARE or len(ti.units) < 2:
                    continue
                start = first + int(rng.integers(0, PERIOD_DAYS))
                while start < now_ord + FUTURE_DAYS:
                    if rng.random() < 0.7:
                        created = min(at(start - 120, 10.0), self.now - timedelta(days=1))
                        self._add_allotment(ti, code, start, created)
                    start += PERIOD_DAYS

    def _add_allotment(self, ti: Any, code: str, start: int, created: datetime) -> dict[str, Any]:
        rng = self.allot_rng
        tbl = self.t["allotments"]
        stamp = dtstr(ms(created))
        return tbl.add(
            {
                "allotmentId": tbl.new_id(),
                "resourceId": ti.resource_id,
                "distributionChannelId": self.channels[code].channel_id,
                "startDate": dstr(start),
                "endDate": dstr(start + PERIOD_DAYS),
                "quantity": int(rng.integers(1, max(2, len(ti.units) // 2) + 1)),
                "releaseDays": int(RELEASE_DAYS[int(rng.integers(len(RELEASE_DAYS)))]),
                "createdDate": stamp,
                "modifiedDate": stamp,
            }
        )

    # advance ---------------------------------------------------------------------------------
    def _draw_allotments(self, start: datetime, end: datetime) -> None:
        span = (end - start).total_seconds()
        if span <= 0:
            return
        per10 = len(self.types) / 10
        due = list(self._allot_due)
        for kind, lam in RATES_PER_DAY.items():
            for _ in range(int(self.allot_rng.poisson(lam * per10 * span / 86400))):
                sec = float(self.allot_rng.uniform(0, span))
                due.append((ms(start + timedelta(seconds=sec)), kind))
        due.sort()
        self._allot_due = due

    def _allotments_until(self, t: datetime) -> None:
        while self._allot_due and self._allot_due[0][0] <= t:
            _when, kind = self._allot_due.pop(0)
            getattr(self, f"_allot_{kind}")(self.now)

    def _future_allotments(self, t: datetime) -> list[dict[str, Any]]:
        day = dstr(t.toordinal())
        return [a for a in self.t["allotments"].records() if a["startDate"] > day]

    def _allot_adjust(self, t: datetime) -> None:
        cands = self._future_allotments(t)
        if not cands:
            return
        a = cands[int(self.allot_rng.integers(len(cands)))]
        step = 1 if a["quantity"] <= 1 or self.allot_rng.random() < 0.5 else -1
        a["quantity"] += step
        a["modifiedDate"] = dtstr(t)
        self._event("ALLOTMENT_EVENT", a["resourceId"], "UPDATE", t)

    def _allot_contract(self, t: datetime) -> None:
        """A channel contracts a new period (a few tries at a type and start it has no
        allotment overlapping)."""
        rng = self.allot_rng
        for _ in range(5):
            ti = self.types[int(rng.integers(len(self.types)))]
            code = CHANNELS[int(rng.integers(len(CHANNELS)))]
            start = t.toordinal() + int(rng.integers(30, 400))
            if len(ti.units) < 2 or self._overlaps(ti.resource_id, code, start):
                continue
            a = self._add_allotment(ti, code, start, t)
            self._event("ALLOTMENT_EVENT", a["resourceId"], "UPDATE", t)
            return

    def _overlaps(self, resource_id: int, code: str, start: int) -> bool:
        channel = self.channels[code].channel_id
        lo, hi = dstr(start), dstr(start + PERIOD_DAYS)
        return any(
            (b["resourceId"], b["distributionChannelId"]) == (resource_id, channel)
            and b["startDate"] < hi
            and lo < b["endDate"]
            for b in self.t["allotments"].records()
        )

    def _allot_withdraw(self, t: datetime) -> None:
        cands = self._future_allotments(t)
        if not cands:
            return
        a = cands[int(self.allot_rng.integers(len(cands)))]
        self.t["allotments"].delete(a["allotmentId"])
        self._event("ALLOTMENT_EVENT", a["resourceId"], "UPDATE", t)
