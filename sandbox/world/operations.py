"""Operations: maintenance tasks, the issues they resolve and the out-of-order periods they put
on units (served as `/operations/tasks` and `/operations/periodicalTasks`, docs/sandbox.md).

A repair task names an issue/incident (`issueIncidentId`) and may take its unit out of order
for whole nights: `outOfOrderFrom` is the first night, `outOfOrderTo` the day after the last
(as a stay's arrival and departure). Routine tasks (cleaning, checks) never take a unit out of
order. A period is placed only on nights the unit is free and marked in the occupancy grid
(`OUT_OF_ORDER`), so no stay is ever booked onto it and availability leaves the unit out.

Every draw comes from the world's own operations sub-generator (`OPERATIONS_STREAM`): the rest
of the world (reservations, bills, events of the generation) is byte-identical to a world
without operations. Under `advance`, incidents are reported, repairs finish early (the period
shortened to end tonight) and planned works that have not started are withdrawn (the task
removed from the service). The interface has no event type for operations; the unit's type gets
an AVAILABILITY_EVENT because its availability changed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from .clock import at, dstr, dtstr, ms

OPERATIONS_STREAM = 0x0905  # the sub-generator's key beside the seed
OUT_OF_ORDER = -1  # occupancy-grid marker of an out-of-order night (stays hold their id > 0)
PERIOD_DAYS = 150  # one out-of-order period per unit per this many days, on average
HISTORY_DAYS = 400  # generated periods start at most this long before the clock
FUTURE_DAYS = 120  # ... and at most this long after it
ROUTINE_PER_UNIT = 2  # routine tasks (never out of order) per unit, on average
# per 100 units and day of `advance`
RATES_PER_DAY = {"incident": 5.0, "finish": 2.0, "withdraw": 2.0}
ISSUES = (
    ("REPAIR", "Leaking roof"),
    ("REPAIR", "Broken heating"),
    ("REPAIR", "Water damage"),
    ("REPAIR", "Electrical fault"),
    ("MAINTENANCE", "Pest control"),
    ("MAINTENANCE", "Renovation of the bathroom"),
)
ROUTINE = (
    ("CLEANING", "Deep clean"),
    ("INSPECTION", "Smoke detector check"),
    ("MAINTENANCE", "Garden maintenance"),
)
PERIODICAL = (
    ("INSPECTION", "Yearly safety inspection", 365),
    ("MAINTENANCE", "Pool maintenance", 7),
    ("CLEANING", "Chimney sweeping", 180),
)


class OperationsMixin:
    """The operations area of the world (see the module docstring)."""

    def _build_operations(self) -> None:
        """Tasks and out-of-order periods of the generated history and near future; runs last
        in `_generate`, so it only sees nights the generated stays left free."""
        self.ops_rng = np.random.default_rng([self.seed, OPERATIONS_STREAM])
        self._ops_due: list[tuple[datetime, str]] = []
        self._issue_seq = 0
        rng = self.ops_rng
        now_ord = self.now.toordinal()
        lo = max(self.ord0, now_ord - HISTORY_DAYS)
        hi = now_ord + FUTURE_DAYS
        for u in range(len(self.unit_ids)):
            for _ in range(int(rng.poisson((hi - lo) / PERIOD_DAYS))):
                first = int(rng.integers(lo, hi))
                nights = int(rng.integers(1, 10))
                lead = int(rng.integers(1, 30))
                created = min(at(first - lead, 9.0), self.now - timedelta(hours=1))
                self._out_of_order(u, first, nights, created)
            for _ in range(int(rng.poisson(ROUTINE_PER_UNIT))):
                day = int(rng.integers(lo, now_ord))
                kind, text = ROUTINE[int(rng.integers(len(ROUTINE)))]
                self._add_task(u, kind, text, None, None, None, at(day, 8.0), "DONE")
        pid = 1
        for loc in self.t["locations"].records():
            for kind, text, every in PERIODICAL:
                start = lo + int(rng.integers(0, 60))
                self.t["periodicaltasks"].add(
                    {
                        "periodicalTaskId": pid,
                        "locationId": loc["locationId"],
                        "taskType": kind,
                        "description": text,
                        "intervalDays": every,
                        "startDate": dstr(start),
                        "endDate": None,
                    }
                )
                pid += 1

    # tasks and the occupancy grid ------------------------------------------------------------
    def _nights_free(self, u: int, first: int, nights: int) -> bool:
        if first < self.ord0 or first + nights > self.ord_end:
            return False
        if self.unit_setup[u] > first or self.unit_arch[u] < first + nights:
            return False
        lo = first - self.ord0
        return not self.occ[u, lo : lo + nights].any()

    def _add_task(
        self,
        u: int,
        kind: str,
        text: str,
        issue: int | None,
        first: int | None,
        last_exclusive: int | None,
        created: datetime,
        status: str,
    ) -> dict[str, Any]:
        ti = self.types[int(self.unit_type[u])]
        tbl = self.t["operationtasks"]
        stamp = dtstr(ms(created))
        return tbl.add(
            {
                "taskId": tbl.new_id(),
                "issueIncidentId": issue,
                "locationId": ti.location_id,
                "resourceId": ti.resource_id,
                "unitId": self.unit_ids[u],
                "taskType": kind,
                "description": text,
                "status": status,
                "outOfOrder": first is not None,
                "outOfOrderFrom": dstr(first) if first is not None else None,
                "outOfOrderTo": dstr(last_exclusive) if last_exclusive is not None else None,
                "createdDate": stamp,
                "modifiedDate": stamp,
            }
        )

    def _out_of_order(self, u: int, first: int, nights: int, created: datetime) -> bool:
        """A repair taking unit `u` out of order for `nights` from `first`, if they are free."""
        if not self._nights_free(u, first, nights):
            return False
        kind, text = ISSUES[int(self.ops_rng.integers(len(ISSUES)))]
        self._issue_seq += 1
        now_ord = self.now.toordinal()
        status = (
            "DONE" if first + nights <= now_ord else "IN_PROGRESS" if first <= now_ord else "OPEN"
        )
        self._add_task(u, kind, text, self._issue_seq, first, first + nights, created, status)
        lo = first - self.ord0
        self.occ[u, lo : lo + nights] = OUT_OF_ORDER
        return True

    def _set_free(self, u: int, first: int, last_exclusive: int) -> None:
        lo, hi = first - self.ord0, last_exclusive - self.ord0
        seg = self.occ[u, lo:hi]
        seg[seg == OUT_OF_ORDER] = 0

    # advance ---------------------------------------------------------------------------------
    def _draw_operations(self, start: datetime, end: datetime) -> None:
        """The operations changes due between `start` and `end` (applied by
        `_operations_until` as the clock passes them)."""
        span = (end - start).total_seconds()
        if span <= 0:
            return
        per100 = len(self.unit_ids) / 100
        due = list(self._ops_due)
        for kind, lam in RATES_PER_DAY.items():
            for _ in range(int(self.ops_rng.poisson(lam * per100 * span / 86400))):
                sec = float(self.ops_rng.uniform(0, span))
                due.append((ms(start + timedelta(seconds=sec)), kind))
        due.sort()
        self._ops_due = due

    def _operations_until(self, t: datetime) -> None:
        while self._ops_due and self._ops_due[0][0] <= t:
            _when, kind = self._ops_due.pop(0)
            getattr(self, f"_ops_{kind}")(self.now)  # the loop's clock: events stay in order

    def _ops_incident(self, t: datetime) -> None:
        rng = self.ops_rng
        u = int(rng.integers(len(self.unit_ids)))
        first = t.toordinal() + int(rng.integers(0, 3))  # an incident is urgent
        if self._out_of_order(u, first, int(rng.integers(1, 10)), t):
            self._ops_changed(u, t)

    def _ops_candidates(self, started: bool, t: datetime) -> list[dict[str, Any]]:
        today = t.toordinal()
        out = []
        for task in self.t["operationtasks"].records():
            if not task["outOfOrder"] or task["status"] == "DONE":
                continue
            first = date_ord(task["outOfOrderFrom"])
            last = date_ord(task["outOfOrderTo"])
            if (started and first <= today < last - 1) or (not started and first > today):
                out.append(task)
        return out

    def _ops_finish(self, t: datetime) -> None:
        """A repair in progress done early: out of order up to tonight only."""
        cands = self._ops_candidates(True, t)
        if not cands:
            return
        task = cands[int(self.ops_rng.integers(len(cands)))]
        u = self.unit_index(task["unitId"])
        end = t.toordinal() + 1
        self._set_free(u, end, date_ord(task["outOfOrderTo"]))
        task["outOfOrderTo"] = dstr(end)
        task["status"] = "DONE"
        task["modifiedDate"] = dtstr(t)
        self._ops_changed(u, t)

    def _ops_withdraw(self, t: datetime) -> None:
        """Planned works that have not started are called off: the task leaves the service."""
        cands = self._ops_candidates(False, t)
        if not cands:
            return
        task = cands[int(self.ops_rng.integers(len(cands)))]
        u = self.unit_index(task["unitId"])
        self._set_free(u, date_ord(task["outOfOrderFrom"]), date_ord(task["outOfOrderTo"]))
        self.t["operationtasks"].delete(task["taskId"])
        self._ops_changed(u, t)

    def _ops_changed(self, u: int, t: datetime) -> None:
        self.n_operations += 1
        self._event(
            "AVAILABILITY_EVENT", self.types[int(self.unit_type[u])].resource_id, "UPDATE", t
        )


def date_ord(value: str) -> int:
    return datetime.fromisoformat(value[:10]).toordinal()
