"""A run's business date: the override, else the service's Date header, else its newest event;
never this machine's clock."""

from __future__ import annotations

from datetime import UTC, date, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from assets.clock import (
    FROM_EVENT,
    FROM_HEADER,
    FROM_OVERRIDE,
    ServiceDateUnknown,
    settle,
)
from assets.settings import IngestSettings
from service.clock import ServiceClock
from service.sync import run


class Dated:
    """A facade whose responses state `date_header` (None: no Date header at all)."""

    def __init__(self, date_header: str | None, newest: dict[str, Any] | None = None) -> None:
        self.client = SimpleNamespace(clock=ServiceClock())
        self.date_header = date_header
        self.newest = newest
        self.requests = 0

    async def latest_event(self) -> dict[str, Any] | None:
        self.requests += 1
        self.client.clock.observe(self.date_header)
        return self.newest


def test_an_override_wins_and_costs_no_request() -> None:
    service = Dated("Sun, 01 Nov 2026 10:00:00 GMT")
    settings, as_of = run(settle(service, IngestSettings(today=date(2026, 6, 1))))
    assert settings.business_date == as_of.business_date == date(2026, 6, 1)
    assert as_of.source == FROM_OVERRIDE and service.requests == 0


def test_a_date_header_already_seen_costs_no_request() -> None:
    service = Dated("Sun, 01 Nov 2026 23:59:00 GMT")
    service.client.clock.observe("Mon, 02 Nov 2026 00:00:01 GMT")  # the run's first response
    settings, as_of = run(settle(service, IngestSettings()))
    assert settings.business_date == date(2026, 11, 2) and as_of.source == FROM_HEADER
    assert as_of.service_time == datetime(2026, 11, 2, 0, 0, 1, tzinfo=UTC)
    assert service.requests == 0


def test_without_a_response_yet_one_small_request_states_it() -> None:
    service = Dated("Sun, 01 Nov 2026 10:00:00 GMT")
    settings, as_of = run(settle(service, IngestSettings()))
    assert settings.today == date(2026, 11, 1) and as_of.source == FROM_HEADER
    assert service.requests == 1


def test_without_date_headers_the_newest_event_stands_in() -> None:
    service = Dated(None, {"eventId": 9, "eventDate": "2026-11-03T22:15:00.000"})
    seen = [{"eventId": 8, "eventDate": "2026-11-04T01:00:00.000"}]  # read by the run
    settings, as_of = run(settle(service, IngestSettings(), seen))
    assert settings.today == date(2026, 11, 4) and as_of.source == FROM_EVENT


def test_a_service_that_states_no_date_stops_the_run() -> None:
    with pytest.raises(ServiceDateUnknown, match="stated no date"):
        run(settle(Dated(None), IngestSettings()))
    with pytest.raises(RuntimeError, match="business date"):
        _ = IngestSettings().business_date  # never the machine's date
