"""The polled event feed and the webhook hook-up.

Late-visible events (off by default): with `late_event_share > 0`, that share of the events made
after generation (by `advance` and the other changes) get their `eventId` when the change happens
but join the feed only once the world's clock has moved `late_event_lag` past their `eventDate`,
like a transaction that commits after a later one. The change itself (the entity) is visible at
once. The decision per event comes from a random stream of its own (seeded from the world's
seed), so switching the setting on changes neither the simulated business nor the other
random draws: only when events become visible.

Semantics: `event_high_water()` (and so the feed's `sort=eventId,desc` mark) is the newest
*visible* eventId; `advance`'s `lastEventId` counts ids *issued* (pending ones included);
`pending_events()` lists what is not visible yet. A released event is inserted at its id's place
in the events table (`Table.insert`), always inside a mutation, so the encode cache (cleared per
`generation`) never serves a page without it.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from .clock import dtstr

DEFAULT_LATE_EVENT_LAG = timedelta(minutes=5)

# entityType per eventType (CUSTOMER and RESERVATION events are about one kind only).
ENTITY_TYPES = {
    "RESERVATION_EVENT": "RESERVATION",
    "CUSTOMER_EVENT": "CUSTOMER",
    "UNIT_EVENT": "UNIT",
    "RATE_EVENT": "ACCOMMODATIONTYPE",
    "AVAILABILITY_EVENT": "ACCOMMODATIONTYPE",
    "ACCOMMODATION_TYPE_EVENT": "ACCOMMODATIONTYPE",
    "RESORT_EVENT": "LOCATION",
    "DISTRIBUTIONCHANNEL_EVENT": "DISTRIBUTIONCHANNEL",
    "ALLOTMENT_EVENT": "ACCOMMODATIONTYPE",
    "RENTABILITY_EVENT": "ACCOMMODATIONTYPE",
    "RESERVABILITY_EVENT": "ACCOMMODATIONTYPE",
    "OWNER_EVENT": "OWNER",
    "ADDON_EVENT": "ADDON",
    "OFFER_EVENT": "OFFER",
    "ADDITION_EVENT": "ACCOMMODATIONTYPE",
    "IMPLY_EVENT": "ACCOMMODATIONTYPE",
}


class EventsMixin:
    """Every change calls `_event`; during generation events are buffered and sorted by time."""

    def _event(
        self,
        event_type: str,
        entity_id: int,
        action: str,
        t: datetime,
        old: int | None = None,
        *,
        entity_type: str | None = None,
    ) -> None:
        """`entity_type` names the kind where one event type covers several (IMPLY_EVENT:
        accommodation type, add-on, offer or unit); by default the event type's one kind."""
        if self._generating:
            if t > self._event_window:
                self._event_buffer.append((t, event_type, entity_id, action, old))
            return
        self._append_event(t, event_type, entity_id, action, old, entity_type)

    def _append_event(
        self,
        t: datetime,
        event_type: str,
        entity_id: int,
        action: str,
        old: int | None,
        entity_type: str | None = None,
    ) -> None:
        tbl = self.t["events"]
        rec = {
            "eventId": tbl.new_id(),
            "eventType": event_type,
            "entityId": entity_id,
            "entityType": entity_type or ENTITY_TYPES.get(event_type, "RESERVATION"),
            "entityAction": action,
            "oldEntityId": old,
            "eventDate": dtstr(t),
        }
        if self._generating:
            tbl.add(rec)
            return
        self._release_due_events(t)
        if self.late_event_share > 0 and self._late_rng.random() < self.late_event_share:
            self._late_events.append((t + self.late_event_lag, rec))
            return
        tbl.add(rec)

    # late-visible events ----------------------------------------------------------------------
    def _init_late_events(
        self, share: float = 0.0, lag: timedelta | float = DEFAULT_LATE_EVENT_LAG
    ) -> None:
        """Called once by the world's constructor (before generation)."""
        self._late_events: list[tuple[datetime, dict[str, Any]]] = []
        self._late_rng = random.Random(f"late-events:{self.seed}")
        self.late_event_share = 0.0
        self.late_event_lag = DEFAULT_LATE_EVENT_LAG
        self._set_late_events(share, lag)

    def _set_late_events(self, share: float, lag: timedelta | float | None) -> None:
        share = float(share)
        if not 0.0 <= share <= 1.0:
            raise ValueError("late_event_share must be between 0 and 1")
        if lag is not None:
            if not isinstance(lag, timedelta):
                lag = timedelta(seconds=float(lag))
            if lag < timedelta(0):
                raise ValueError("late_event_lag must not be negative")
            self.late_event_lag = lag
        self.late_event_share = share

    def configure_late_events(
        self, share: float, lag: timedelta | float | None = None
    ) -> dict[str, Any]:
        """Make `share` of the events from now on visible only `lag` (a timedelta or seconds;
        None keeps the current lag) after their eventDate. Events already pending stay pending
        until their time. Returns `late_events()`."""
        with self.lock:
            self._set_late_events(share, lag)
            return self.late_events()

    def late_events(self) -> dict[str, Any]:
        """The setting and how many events wait to become visible."""
        with self.lock:
            return {
                "share": self.late_event_share,
                "lagSeconds": self.late_event_lag.total_seconds(),
                "pending": len(self._late_events),
            }

    def pending_events(self) -> list[dict[str, Any]]:
        """Events issued but not visible in the feed yet (copies, in eventId order)."""
        with self.lock:
            return sorted((dict(rec) for _, rec in self._late_events), key=lambda r: r["eventId"])

    def _release_due_events(self, now: datetime | None = None) -> int:
        """Put the pending events whose time has come (`eventDate + lag <= now`) into the feed;
        returns how many. Callers that change records do it inside a mutation, so that the
        world's `generation` moves (and with it the encode cache)."""
        if not self._late_events:
            return 0
        now = self.now if now is None else now
        due = [item for item in self._late_events if item[0] <= now]
        if not due:
            return 0
        self._late_events = [item for item in self._late_events if item[0] > now]
        tbl = self.t["events"]
        for _, rec in sorted(due, key=lambda item: item[1]["eventId"]):
            tbl.insert(rec)
        return len(due)

    def _flush_events(self) -> None:
        self._event_buffer.sort(key=lambda e: e[0])
        for t, et, eid, action, old in self._event_buffer:
            self._append_event(t, et, eid, action, old)
        self._event_buffer = []

    def event_high_water(self) -> int:
        """Largest *visible* eventId (0 when none): the feed's high-water mark. Ids of pending
        late events (see `pending_events`) may lie below or above it."""
        with self.lock:
            keys = self.t["events"].key_list()
            return keys[-1] if keys else 0

    def _hook(self, type_: str, r: Any, t: datetime, **extra: Any) -> None:
        """Queue a webhook for reservation `r` when a receiver is configured."""
        sender = self._webhooks
        if sender is None or self._generating:
            return
        rec = r.rec
        data: dict[str, Any] = {
            "reservationId": rec["reservationId"],
            "reservationNumber": rec["reservationNumber"],
            "status": rec["status"],
            "arrivalDate": rec["arrivalDate"],
            "departureDate": rec["departureDate"],
        }
        data.update(extra)
        sender.send(f"reservation.{type_}", data, t, self.now)
        self.webhooks_sent += 1
