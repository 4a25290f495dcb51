"""`WorldClockHeader`: every response states the world's time in its `Date` header.

The sandbox runs on a clock of its own (`World.now`, moved by `advance`); a client learns the
service's date the way it would from the real service, from the `Date` header (RFC 9110
5.6.7). The server's own `Date` header (the machine's clock) is turned off (`sandbox.runner`).
"""

from __future__ import annotations

from datetime import UTC
from email.utils import format_datetime

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.protocol import World


def http_date(world: World) -> bytes:
    """The world's time as an HTTP date (`Sun, 01 Nov 2026 10:00:00 GMT`)."""
    return format_datetime(world.now.replace(tzinfo=UTC, microsecond=0), usegmt=True).encode()


class WorldClockHeader:
    """Pure ASGI middleware: sets `date` on every HTTP response to the world's time."""

    def __init__(self, app: ASGIApp, world: World) -> None:
        self.app = app
        self.world = world

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def dated_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"date"]
                headers.append((b"date", http_date(self.world)))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, dated_send)
