"""Changes to accommodation types and locations under `advance`, with their events.

The interface's event table has ACCOMMODATION_TYPE_EVENT (entityId: the type's resourceId) and
RESORT_EVENT (entityId: the locationId); without changes to emit them, their refresh paths were
only tested offline. Here a park re-ranks a type (`priority`) or changes a location's minimum
booking age (`minAgeForBooking`): fields no mart reads, so the ground truth is untouched. Every
draw comes from the world's own sub-generator (`REFERENCE_STREAM`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from .clock import ms

REFERENCE_STREAM = 0x7EF  # the sub-generator's key beside the seed
RATES_PER_DAY = {"type": 5.0, "location": 3.0}  # per world


class ReferenceChangesMixin:
    """Type and location changes of `advance` (see the module docstring)."""

    def _reference_rng(self) -> np.random.Generator:
        rng = getattr(self, "_ref_rng", None)
        if rng is None:
            rng = self._ref_rng = np.random.default_rng([self.seed, REFERENCE_STREAM])
            self._ref_due: list[tuple[datetime, str]] = []
        return rng

    def _draw_reference_changes(self, start: datetime, end: datetime) -> None:
        rng = self._reference_rng()
        span = (end - start).total_seconds()
        if span <= 0:
            return
        due = list(self._ref_due)
        for kind, lam in RATES_PER_DAY.items():
            for _ in range(int(rng.poisson(lam * span / 86400))):
                due.append((ms(start + timedelta(seconds=float(rng.uniform(0, span)))), kind))
        due.sort()
        self._ref_due = due

    def _reference_changes_until(self, t: datetime) -> None:
        self._reference_rng()
        while self._ref_due and self._ref_due[0][0] <= t:
            _when, kind = self._ref_due.pop(0)
            rng = self._ref_rng
            if kind == "type":
                recs = self.t["accommodationtypes"].records()
                rec = recs[int(rng.integers(len(recs)))]
                rec["priority"] = int(rng.integers(1, 100))
                self._event("ACCOMMODATION_TYPE_EVENT", rec["resourceId"], "UPDATE", self.now)
            else:
                recs = self.t["locations"].records()
                rec = recs[int(rng.integers(len(recs)))]
                rec["minAgeForBooking"] = int(rng.choice([18, 21, 25]))
                self._event("RESORT_EVENT", rec["locationId"], "UPDATE", self.now)
