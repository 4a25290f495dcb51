"""`ServiceGate`: throttle, latency, faults, token check and stats in front of `/service/v2`.

Pure ASGI middleware, so it can count in-flight requests before routing and break responses on
purpose. Request path: throttle -> latency -> faults (429/5xx) -> token check -> slow -> handler
-> drop/truncate. `/_admin/...` and `/openapi.json` pass straight through.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.auth import AuthError
from sandbox.faults import FAULT_NAMES, truncate
from sandbox.server.common import _JSON, AUTHENTICATE_PATH, SERVICE_PREFIX, error_body
from sandbox.server.routes import Service


class ServiceGate:
    """Throttle, latency, faults, auth and stats for `/service/v2` (see module docstring)."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(SERVICE_PREFIX):
            await self.app(scope, receive, send)
            return
        service = self.service
        stats = service.stats
        endpoint = service.template_for(scope)
        client = (scope.get("client") or ("unknown", 0))[0]
        if stats.in_flight_by_client[client] >= service.settings.max_concurrency:
            stats.record(endpoint, 429, throttled=True)
            await _send_error(
                send, 429, "TOO_MANY_REQUESTS", "too many concurrent requests from this address"
            )
            return
        status = [0]
        left = [False]

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif (
                message["type"] == "http.response.body"
                and not message.get("more_body")
                and not left[0]
            ):
                # the request stops counting before its last bytes go out: once the client has
                # the whole answer it may send the next request, which must find the slot free
                left[0] = True
                stats.leave(client)
            await send(message)

        stats.enter(client)
        try:
            await self._serve(scope, receive, counting_send)
        finally:
            if not left[0]:
                stats.leave(client)
            stats.record(endpoint, status[0])

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        service = self.service
        settings = service.settings
        if settings.latency_ms > 0:
            await asyncio.sleep(settings.latency_ms / 1000)
        if scope["path"] == AUTHENTICATE_PATH:
            await self.app(scope, receive, send)
            return
        names = FAULT_NAMES if scope["method"] == "GET" else ("token_expire",)
        decision = service.faults.decide(names)
        if decision.status is not None:
            await _send_error(
                send,
                decision.status,
                f"FAULT_{decision.status}",
                "injected fault: service temporarily unavailable",
            )
            return
        headers = dict(scope["headers"])
        try:
            service.tokens.check(headers.get(b"authorization", b"").decode("latin-1"))
        except AuthError as exc:
            await _send_error(send, exc.status, exc.code, exc.message)
            return
        if "token_expire" in decision:
            await _send_error(send, 401, "TOKEN_EXPIRED", "access token expired")
            return
        # a valid token whose user may not read this area (sandbox/areas.py)
        refused = service.areas.decide(
            scope["path"].removeprefix(SERVICE_PREFIX), settings.client_id, settings.scope
        )
        if refused is not None:
            await _send_error(send, *refused)
            return
        if "slow" in decision:
            await asyncio.sleep(service.faults.slow_seconds)
        scope.setdefault("state", {})["faults"] = decision
        if "drop" in decision or "truncate" in decision:
            send = _breaking_send(send, drop="drop" in decision)
        await self.app(scope, receive, send)


def _breaking_send(send: Send, *, drop: bool) -> Send:
    """Hold the response, then send half of its body: closed mid-body (drop) or short (truncate)."""
    held: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def breaking_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            held["start"] = message
            return
        if message["type"] != "http.response.body" or held.get("done"):
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body"):
            return
        held["done"] = True
        body = b"".join(chunks)
        start = held["start"]
        if not body or start["status"] != 200:
            await send(start)
            await send({"type": "http.response.body", "body": body})
            return
        half = truncate(body)
        if drop:
            # Returning without completing the body makes uvicorn close the connection.
            await send(start)
            await send({"type": "http.response.body", "body": half, "more_body": True})
            return
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(half)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": half})

    return breaking_send


async def _send_error(send: Send, status: int, code: str, message: str) -> None:
    body = error_body(status, code, message)
    headers = [(b"content-type", _JSON.encode()), (b"content-length", str(len(body)).encode())]
    if status in (429, 503):
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
