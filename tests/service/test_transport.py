"""The client's transport (httpx API over aiohttp) against a real socket server that misbehaves
on purpose: every failure comes out as the httpx error that names it, and a good answer is
delivered byte for byte."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import httpx
import pytest

from service.client import ServiceClient
from service.errors import ServiceUnavailable
from service.throttle import ConcurrencyLimiter
from service.transport import ServiceTransport
from tests.service.fakes import make_config

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


async def _serve(handler: Handler, scenario: Callable[[str], Awaitable[object]]) -> object:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        return await scenario(f"http://127.0.0.1:{port}")
    finally:
        server.close()


async def _get(url: str) -> httpx.Response:
    transport = ServiceTransport(2)
    async with httpx.AsyncClient(transport=transport, timeout=5) as client:
        return await client.get(url + "/x")


def test_a_good_answer_arrives_whole_with_its_status_and_headers() -> None:
    body = bytes(range(256)) * 4096  # 1 MiB, many chunks

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\nx-page: 7\r\n"
            + f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    response = asyncio.run(_serve(handler, _get))
    assert isinstance(response, httpx.Response)
    assert response.status_code == 200
    assert response.headers["x-page"] == "7"
    assert response.content == body


def test_a_connection_closed_before_the_answer_is_a_protocol_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.close()

    with pytest.raises(httpx.RemoteProtocolError):
        asyncio.run(_serve(handler, _get))


def test_a_body_cut_short_is_a_read_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n" + b"x" * 10)
        await writer.drain()
        writer.close()

    with pytest.raises(httpx.ReadError):
        asyncio.run(_serve(handler, _get))


def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    with pytest.raises(httpx.ConnectError):
        asyncio.run(_get(f"http://127.0.0.1:{port}"))


def test_a_silent_server_is_a_read_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await asyncio.sleep(2)
        writer.close()

    async def scenario(url: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=ServiceTransport(1), timeout=0.2) as client:
            return await client.get(url + "/x")

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(_serve(handler, scenario))


def test_the_session_is_made_on_first_use_and_closed_with_the_client() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        await writer.drain()
        writer.close()

    transport = ServiceTransport(3)

    async def scenario(url: str) -> int:
        async with httpx.AsyncClient(transport=transport) as client:
            assert transport.client is not None and callable(transport.client)  # not made yet
            response = await client.get(url + "/x")
            session = transport.client
            assert session.connector is not None and session.connector.limit == 3
        assert session.closed
        return response.status_code

    assert asyncio.run(_serve(handler, scenario)) == 204


def test_the_client_retries_dropped_connections_then_names_the_endpoint() -> None:
    """Through `ServiceClient` on the default transport: every drop is retried, and the final
    error says what failed, counted as dropped connections (not timeouts)."""
    hits = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal hits
        await _read_request(reader)
        hits += 1
        writer.close()

    async def scenario(url: str) -> object:
        config = make_config(base_url=url, max_retries=2, max_retry_seconds=5.0)
        client = ServiceClient(config, limiter=ConcurrencyLimiter(2))
        async with client:
            client.auth.header = _no_auth  # type: ignore[method-assign]
            with pytest.raises(ServiceUnavailable) as caught:
                await client.get_json("reservations")
            return caught.value, client.stats.snapshot()

    error, snapshot = asyncio.run(_serve(handler, scenario))  # type: ignore[misc]
    assert "reservations" in str(error)
    assert "connection dropped" in str(error)
    assert hits == 3
    assert isinstance(snapshot, dict)


async def _no_auth() -> None:
    return None
