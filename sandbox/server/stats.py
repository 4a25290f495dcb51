"""Request counters behind `/_admin/stats`."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any


class Stats:
    """Request counters for `/_admin/stats`; mutated on the event loop, read from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.in_flight_by_client: Counter[str] = Counter()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.started = time.time()
            self.requests = 0
            self.throttled = 0
            self.endpoints: Counter[str] = Counter()
            self.statuses: Counter[int] = Counter()
            self.endpoint_statuses: dict[str, Counter[int]] = {}
            self.peak_in_flight = self.in_flight
            self.peak_in_flight_per_client = max(self.in_flight_by_client.values(), default=0)

    def enter(self, client: str) -> None:
        with self._lock:
            self.in_flight += 1
            self.in_flight_by_client[client] += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self.peak_in_flight_per_client = max(
                self.peak_in_flight_per_client, self.in_flight_by_client[client]
            )

    def leave(self, client: str) -> None:
        with self._lock:
            self.in_flight -= 1
            self.in_flight_by_client[client] -= 1
            if self.in_flight_by_client[client] <= 0:
                del self.in_flight_by_client[client]

    def record(self, endpoint: str, status: int, *, throttled: bool = False) -> None:
        with self._lock:
            self.requests += 1
            self.throttled += throttled
            self.endpoints[endpoint] += 1
            self.statuses[status] += 1
            self.endpoint_statuses.setdefault(endpoint, Counter())[status] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "since": self.started,
                "requests": self.requests,
                "throttled": self.throttled,
                "endpoints": dict(self.endpoints),
                "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
                "endpointStatuses": {
                    e: {str(k): v for k, v in sorted(c.items())}
                    for e, c in self.endpoint_statuses.items()
                },
                "inFlight": self.in_flight,
                "peakInFlight": self.peak_in_flight,
                "peakInFlightPerClient": self.peak_in_flight_per_client,
            }
