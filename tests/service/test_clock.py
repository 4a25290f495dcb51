"""The service's clock: the client keeps the newest `Date` header its responses stated."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from service.clock import ServiceClock, parse_http_date
from service.sync import run
from service.throttle import ConcurrencyLimiter
from tests.service.fakes import FakeService
from tests.service.helpers import client_for


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sun, 01 Nov 2026 10:00:00 GMT", datetime(2026, 11, 1, 10, tzinfo=UTC)),
        ("Sunday, 01-Nov-26 23:59:59 GMT", datetime(2026, 11, 1, 23, 59, 59, tzinfo=UTC)),
        ("Sun Nov  1 10:00:00 2026", datetime(2026, 11, 1, 10, tzinfo=UTC)),
        ("Sun, 01 Nov 2026 10:00:00 +0100", datetime(2026, 11, 1, 9, tzinfo=UTC)),
        (None, None),
        ("", None),
        ("yesterday", None),
        ("Tue, 24 Nov 2026 17:00:00 GMT, Sun, 01 Nov 2026 00:00:00 GMT", None),  # two clocks
    ],
)
def test_http_dates_parse_to_utc(text: str | None, expected: datetime | None) -> None:
    assert parse_http_date(text) == expected


def test_the_newest_date_wins() -> None:
    clock = ServiceClock()
    assert clock.now() is None
    clock.observe("Mon, 02 Nov 2026 08:00:00 GMT")
    clock.observe("Sun, 01 Nov 2026 23:00:00 GMT")  # a slower response, sent earlier
    clock.observe("garbage")
    assert clock.now() == datetime(2026, 11, 2, 8, tzinfo=UTC)


def test_the_client_reads_the_date_of_every_response(
    fake: FakeService, limiter: ConcurrencyLimiter
) -> None:
    stated = ["Tue, 03 Mar 2026 21:30:00 GMT", "Wed, 04 Mar 2026 00:00:05 GMT"]

    def dated(request: httpx.Request) -> httpx.Response | None:
        if not request.url.path.endswith("/companies/1"):
            return None
        return httpx.Response(200, json={"companyId": 1}, headers={"date": stated.pop(0)})

    fake.scripts.append(dated)

    async def main() -> list[datetime | None]:
        async with client_for(fake, limiter) as client:
            seen = [client.clock.now()]
            for _ in range(2):
                await client.get_json("/companies/1")
                seen.append(client.clock.now())
            return seen

    assert run(main()) == [
        None,
        datetime(2026, 3, 3, 21, 30, tzinfo=UTC),
        datetime(2026, 3, 4, 0, 0, 5, tzinfo=UTC),
    ]
