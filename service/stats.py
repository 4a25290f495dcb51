"""Request accounting per run: counts per endpoint template and status, retries, bytes, and a
projection of the day's use against the free daily quota (production requests beyond it cost
money, so the warning comes before the quota is passed, not after)."""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from service.errors import RequestBudgetExceeded

log = logging.getLogger("service.stats")

WARN_FRACTION = 0.9  # warn once the day's projected use reaches 90 % of the free quota

_ID_SEGMENT = re.compile(r"/\d+(?=/|$)")


def endpoint_template(path: str) -> str:
    """`/reservations/123/details` -> `/reservations/{id}/details` (ids vary, templates don't)."""
    return _ID_SEGMENT.sub("/{id}", path.split("?", 1)[0])


@dataclass
class RequestStats:
    """Counters of one client (one run). Safe to update from one loop; read any time."""

    used_today: int = 0
    daily_free: int = 25_000
    max_requests: int = 0  # 0 = no limit; else `count_request` refuses the one past it
    requests: int = 0
    retries: int = 0
    bytes_received: int = 0
    by_endpoint: Counter[str] = field(default_factory=Counter)
    by_status: Counter[int] = field(default_factory=Counter)
    retries_by_reason: Counter[str] = field(default_factory=Counter)
    _warned: set[str] = field(default_factory=set, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count_request(self, template: str) -> None:
        """Count a request about to be sent; raise `RequestBudgetExceeded` past the budget."""
        with self._lock:
            if self.max_requests and self.requests >= self.max_requests:
                raise self._over_budget(template)
            self.requests += 1
            self.by_endpoint[template] += 1
            projected = self.used_today + self.requests
        self._check_quota(projected)

    def count_response(self, status: int, nbytes: int) -> None:
        with self._lock:
            self.by_status[status] += 1
            self.bytes_received += nbytes

    def count_retry(self, reason: str) -> None:
        with self._lock:
            self.retries += 1
            self.retries_by_reason[reason] += 1

    def projection(self, runs_per_day: float = 1.0) -> dict[str, Any]:
        """Today's use if the rest of the day repeats this run `runs_per_day - 1` more times."""
        projected = self.used_today + round(self.requests * max(runs_per_day, 1.0))
        return {
            "used_today": self.used_today,
            "this_run": self.requests,
            "projected_today": projected,
            "daily_free": self.daily_free,
            "free_remaining": max(0, self.daily_free - projected),
            "over_free_quota": projected > self.daily_free,
        }

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "retries": self.retries,
                "bytes_received": self.bytes_received,
                "by_endpoint": dict(sorted(self.by_endpoint.items())),
                "by_status": {str(k): v for k, v in sorted(self.by_status.items())},
                "retries_by_reason": dict(sorted(self.retries_by_reason.items())),
                "projection": self.projection(),
            }

    def _over_budget(self, template: str) -> RequestBudgetExceeded:
        busiest, count = self.by_endpoint.most_common(1)[0] if self.by_endpoint else (template, 0)
        return RequestBudgetExceeded(
            f"this run has sent {self.requests} requests, its limit (RESERVOIR_MAX_REQUESTS, "
            f"max_requests); the service's free quota is {self.daily_free} a day. The run "
            f"stopped before sending GET {template}: tables already landed stay, the rest are "
            f"read again by the next run. Most requests went to {busiest} ({count}); if that "
            "is more than its data needs, the service may be repeating pages (a filter it "
            "ignores) - see the paging log. If the run really needs more, raise "
            "RESERVOIR_MAX_REQUESTS (0 = no limit).",
            endpoint=template,
        )

    def _check_quota(self, projected: int) -> None:
        if self.daily_free <= 0:
            return
        if projected >= self.daily_free * WARN_FRACTION and "near" not in self._warned:
            self._warned.add("near")
            log.warning(
                "request use today is at %d of the %d free daily requests (%.0f%%); "
                "requests beyond the free quota are charged",
                projected,
                self.daily_free,
                100 * projected / self.daily_free,
            )
        if projected >= self.daily_free and "over" not in self._warned:
            self._warned.add("over")
            log.warning(
                "the free daily quota of %d requests is used up; further requests are charged",
                self.daily_free,
            )
