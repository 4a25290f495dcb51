"""The polled event feed and the webhook hook-up."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .clock import dtstr

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
}


class EventsMixin:
    """Every change calls `_event`; during generation events are buffered and sorted by time."""

    def _event(
        self, event_type: str, entity_id: int, action: str, t: datetime, old: int | None = None
    ) -> None:
        if self._generating:
            if t > self._event_window:
                self._event_buffer.append((t, event_type, entity_id, action, old))
            return
        self._append_event(t, event_type, entity_id, action, old)

    def _append_event(
        self, t: datetime, event_type: str, entity_id: int, action: str, old: int | None
    ) -> None:
        tbl = self.t["events"]
        tbl.add(
            {
                "eventId": tbl.new_id(),
                "eventType": event_type,
                "entityId": entity_id,
                "entityType": ENTITY_TYPES.get(event_type, "RESERVATION"),
                "entityAction": action,
                "oldEntityId": old,
                "eventDate": dtstr(t),
            }
        )

    def _flush_events(self) -> None:
        self._event_buffer.sort(key=lambda e: e[0])
        for t, et, eid, action, old in self._event_buffer:
            self._append_event(t, et, eid, action, old)
        self._event_buffer = []

    def event_high_water(self) -> int:
        """Largest eventId so far (0 when none): the feed's high-water mark."""
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
