from __future__ import annotations

import httpx
import pytest

from service.errors import ServiceUnavailable
from service.sync import run
from tests.service.fakes import FakeService, _error, fail_times, records
from tests.service.helpers import client_for, drain


def _raise(exc_type: type[Exception]):
    def answer(request: httpx.Request) -> httpx.Response:
        raise exc_type("boom", request=request)

    return answer


TRANSIENT = [
    pytest.param(
        lambda r: _error(429, "TOO_MANY_REQUESTS", "slow down", {"Retry-After": "0"}),
        "HTTP 429",
        id="429-retry-after",
    ),
    pytest.param(
        lambda r: _error(429, "TOO_MANY_REQUESTS", "slow down"), "HTTP 429", id="429-no-header"
    ),
    pytest.param(lambda r: _error(500, "ERR", "x"), "HTTP 500", id="500"),
    pytest.param(lambda r: _error(502, "ERR", "x"), "HTTP 502", id="502"),
    pytest.param(lambda r: _error(503, "ERR", "x", {"Retry-After": "0"}), "HTTP 503", id="503"),
    pytest.param(lambda r: _error(504, "ERR", "x"), "HTTP 504", id="504"),
    pytest.param(_raise(httpx.ReadTimeout), "timeout", id="read-timeout"),
    pytest.param(_raise(httpx.ConnectTimeout), "timeout", id="connect-timeout"),
    pytest.param(_raise(httpx.RemoteProtocolError), "connection dropped", id="dropped"),
    pytest.param(_raise(httpx.ReadError), "connection dropped", id="read-error"),
    pytest.param(_raise(httpx.ConnectError), "connection dropped", id="connect-error"),
    pytest.param(
        lambda r: httpx.Response(200, content=b'{"content": [{"unitId": 1}, {"un'),
        "truncated",
        id="truncated-json",
    ),
    pytest.param(
        lambda r: httpx.Response(200, json={"content": [], "numberOfElements": 3}),
        "envelope",
        id="inconsistent-envelope",
    ),
]


@pytest.fixture
def units(fake: FakeService) -> FakeService:
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 31))))
    return fake


@pytest.mark.parametrize(("answer", "reason"), TRANSIENT)
def test_transient_failures_are_retried(units: FakeService, limiter, answer, reason) -> None:
    units.scripts.append(fail_times(2, answer, "/units"))

    async def main() -> tuple[list, dict]:
        async with client_for(units, limiter) as client:
            rows = await drain(client.iter_keyset("/units", "unitId"))
            return rows, client.stats_snapshot()

    rows, stats = run(main())
    assert sorted(r["unitId"] for r in rows) == list(range(1, 31))
    assert stats["retries"] == 2
    assert any(reason in key for key in stats["retries_by_reason"])


@pytest.mark.parametrize(("answer", "reason"), TRANSIENT[2:4] + TRANSIENT[6:9])
def test_retries_are_bounded_and_name_the_endpoint(units, limiter, answer, reason) -> None:
    units.scripts.append(fail_times(1000, answer, "/units/17"))

    async def main() -> None:
        async with client_for(units, limiter, max_retries=3) as client:
            await client.get_page("/units/17")

    with pytest.raises(ServiceUnavailable) as info:
        run(main())
    assert info.value.endpoint == "/units/{id}"
    assert "/units/{id}" in str(info.value) and "4 attempts" in str(info.value)
    assert units.paths["/units/17"] == 0  # every attempt was answered by the failure script
    assert len(units.data_requests("/units/17")) == 4


def test_authenticate_is_retried_on_server_errors(fake: FakeService, limiter) -> None:
    fake.add_list("/units", "unitId", records("unitId", [1]))
    left = [2]

    def flaky_auth(request: httpx.Request) -> httpx.Response | None:
        if request.url.path.endswith("/authenticate") and left[0] > 0:
            left[0] -= 1
            return _error(500, "ERR", "Error occurred while processing")
        return None

    fake.scripts.append(flaky_auth)

    async def main() -> list:
        async with client_for(fake, limiter) as client:
            return await drain(client.iter_keyset("/units", "unitId"))

    assert len(run(main())) == 1


def test_writes_are_never_retried(fake: FakeService, limiter) -> None:
    fake.scripts.append(fail_times(5, lambda r: _error(503, "ERR", "x"), "/reservations"))

    async def main() -> None:
        async with client_for(fake, limiter) as client:
            await client.send("POST", "/reservations", json={"categoryCode": "GUEST"})

    with pytest.raises(ServiceUnavailable):
        run(main())
    assert len(fake.data_requests("/reservations")) == 1


class _Drip(httpx.AsyncByteStream):
    """A body that arrives a byte at a time: each read is quick, the whole never ends in time."""

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        import asyncio

        for byte in b'{"content": [{"unitId": 1}]}' * 100:
            await asyncio.sleep(0.05)
            yield bytes([byte])


def test_a_dripped_body_hits_the_request_deadline(units: FakeService, limiter) -> None:
    """The per-read timeout never fires on a body dripped byte by byte; the deadline for the
    whole answer does, and the request is retried, then refused, naming the reason."""
    units.scripts.append(fail_times(1000, lambda r: httpx.Response(200, stream=_Drip()), "/units"))

    async def main() -> None:
        async with client_for(units, limiter, max_retries=1, request_deadline=0.3) as client:
            await drain(client.iter_keyset("/units", "unitId"))

    with pytest.raises(ServiceUnavailable, match=r"no whole answer within 0.3 s"):
        run(main())
