"""An open client relaxes the cyclic GC's first generation and puts it back when the last closes;
every client shares one TLS context."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from service import gctune
from service.throttle import ConcurrencyLimiter
from service.transport import ServiceTransport, tls_context
from tests.service.fakes import FakeService
from tests.service.helpers import client_for, service_for


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*saved)


def test_open_clients_relax_gen0_and_the_last_close_restores(
    thresholds: tuple[int, int, int],
) -> None:
    fake = FakeService()
    limiter = ConcurrencyLimiter(4)

    async def scenario() -> list[tuple[int, int, int]]:
        seen = []
        first = service_for(fake, limiter)
        second = service_for(fake, limiter)
        async with first:
            seen.append(gc.get_threshold())
            async with second:
                seen.append(gc.get_threshold())
            seen.append(gc.get_threshold())  # `first` still open
        seen.append(gc.get_threshold())
        return seen

    relaxed = (gctune.GC_GEN0_WHILE_READING, 10, 10)
    assert asyncio.run(scenario()) == [relaxed, relaxed, relaxed, thresholds]


def test_a_disabled_collector_stays_as_the_user_set_it(
    thresholds: tuple[int, int, int],
) -> None:
    gc.set_threshold(0, 10, 10)

    async def scenario() -> tuple[int, int, int]:
        async with client_for(FakeService(), ConcurrencyLimiter(2)):
            return gc.get_threshold()

    assert asyncio.run(scenario()) == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)


def test_closing_twice_releases_once(thresholds: tuple[int, int, int]) -> None:
    async def scenario() -> None:
        other = client_for(FakeService(), ConcurrencyLimiter(2))
        await other.__aenter__()
        client = client_for(FakeService(), ConcurrencyLimiter(2))
        await client.__aenter__()
        await client.aclose()
        await client.aclose()
        assert gc.get_threshold()[0] == gctune.GC_GEN0_WHILE_READING  # `other` is open
        await other.aclose()

    asyncio.run(scenario())
    assert gc.get_threshold() == thresholds


def test_clients_share_one_tls_context() -> None:
    from service.client import ServiceClient
    from tests.service.fakes import make_config

    a, b = (ServiceClient(make_config(), limiter=ConcurrencyLimiter(2)) for _ in range(2))
    transports = [c._http._transport for c in (a, b)]
    assert all(isinstance(t, ServiceTransport) for t in transports)
    assert {id(t.ssl_context) for t in transports} == {id(tls_context())}
    asyncio.run(a.aclose())
    asyncio.run(b.aclose())
