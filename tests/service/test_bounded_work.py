"""Bounded work: a run stops at its request budget, and a body past the size limit is refused
without being held in memory, over a real socket (chunked, declared length, gzip bomb)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from typing import Any

import pytest

from service.client import ServiceClient
from service.errors import ConfigurationError, RequestBudgetExceeded, ResponseTooLarge
from service.sync import run
from service.throttle import ConcurrencyLimiter
from tests.service.fakes import FakeService, make_config, records
from tests.service.helpers import client_for, drain


def test_a_run_stops_at_its_request_budget(fake: FakeService, limiter) -> None:
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 101))))

    async def main() -> Any:
        async with client_for(fake, limiter, max_requests=4, page_size=10) as client:
            with pytest.raises(RequestBudgetExceeded) as caught:
                await drain(client.iter_pages("/units"))
            return caught.value, client.stats.requests

    error, sent = run(main())
    assert sent == 4  # the authenticate call and three pages; the fifth was never sent
    assert "RESERVOIR_MAX_REQUESTS" in str(error) and "/units" in str(error)


def test_no_budget_reads_everything(fake: FakeService, limiter) -> None:
    fake.add_list("/units", "unitId", records("unitId", list(range(1, 101))))

    async def main() -> int:
        async with client_for(fake, limiter, max_requests=0, page_size=10) as client:
            return len(await drain(client.iter_pages("/units")))

    assert run(main()) == 100


def test_a_negative_budget_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="RESERVOIR_MAX_REQUESTS"):
        make_config(max_requests=-1)


def _respond(head: bytes, body: bytes) -> Any:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head + body)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    return handler


async def _get_with_limit(handler: Any, limit: int) -> BaseException | bytes:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = make_config(base_url=f"http://127.0.0.1:{port}", max_response_bytes=limit)
    try:
        async with ServiceClient(config, limiter=ConcurrencyLimiter(2)) as client:
            client.auth.header = _no_auth  # type: ignore[method-assign]
            try:
                await client.get_json("reservations")
            except ResponseTooLarge as exc:
                return exc
            return b"read"
    finally:
        server.close()


async def _no_auth() -> None:
    return None


LIMIT = 256 * 1024
BIG = b'{"x": "' + b"a" * (4 * LIMIT) + b'"}'


@pytest.mark.parametrize(
    "head",
    [
        pytest.param(
            f"HTTP/1.1 200 OK\r\ncontent-length: {len(BIG)}\r\n\r\n".encode(), id="declared"
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n", id="undeclared"),
    ],
)
def test_a_body_past_the_limit_is_refused(head: bytes) -> None:
    result = asyncio.run(_get_with_limit(_respond(head, BIG), LIMIT))
    assert isinstance(result, ResponseTooLarge), result
    assert "RESERVOIR_MAX_RESPONSE_MB" in str(result) and "/reservations" in str(result)


def test_a_compressed_body_that_inflates_past_the_limit_is_refused() -> None:
    packed = gzip.compress(BIG)
    assert len(packed) < LIMIT  # small on the wire
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
        f"content-length: {len(packed)}\r\n\r\n"
    ).encode()
    result = asyncio.run(_get_with_limit(_respond(head, packed), LIMIT))
    assert isinstance(result, ResponseTooLarge), result


def test_a_body_under_the_limit_is_read() -> None:
    body = b'{"x": "' + b"a" * (LIMIT // 2) + b'"}'
    head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n\r\n".encode()
    assert asyncio.run(_get_with_limit(_respond(head, body), LIMIT)) == b"read"
