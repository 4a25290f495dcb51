"""The service's clock as its responses state it: the HTTP `Date` header (RFC 9110 5.6.7).

The business date of a run is the service's date, never this machine's: a sandbox has a clock of
its own, and a machine's clock may be off. Every response passes its `Date` header here; the
newest one wins (concurrent responses may arrive out of order).
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


def parse_http_date(value: str | None) -> datetime | None:
    """`Sun, 01 Nov 2026 10:00:00 GMT` as an aware UTC datetime; None when absent, unreadable or
    ambiguous (several Date headers joined into one value: a proxy that added its own clock's
    to the service's; which one is the service's cannot be told)."""
    if not value or value.count(":") > 2:  # one HTTP date holds exactly one hh:mm:ss
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    if moment.tzinfo is None:  # RFC 850 / asctime forms carry no zone: they are GMT
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


class ServiceClock:
    """The newest time the service stated in a response's `Date` header (None until one)."""

    def __init__(self) -> None:
        self._seen: datetime | None = None

    def observe(self, value: str | None) -> None:
        moment = parse_http_date(value)
        if moment is not None and (self._seen is None or moment > self._seen):
            self._seen = moment

    def now(self) -> datetime | None:
        return self._seen
