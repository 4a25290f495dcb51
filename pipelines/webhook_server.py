"""Serving the webhook receiver: uvicorn with the server's own limits.

Header size (h11 refuses more), connection count (503 beyond it), idle keep-alive, and a
deadline for each request: a connection that has not delivered a whole request (headers and
body) within `REQUEST_SECONDS` of opening, or of its previous response, is closed. Without it,
400 connections sending a header byte now and then stayed open for good (uvicorn has no header
or body timeout of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol

from pipelines.webhook_inbox import WebhookInbox
from pipelines.webhook_verify import DEFAULT_MAX_BODY_BYTES, DEFAULT_TOLERANCE_SECONDS
from pipelines.webhooks import WEBHOOK_PATH, create_webhook_app

logger = logging.getLogger("pipelines.webhooks")

REQUEST_SECONDS = 10.0  # a whole request (headers and body) must arrive within this


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request to arrive whole."""

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request on this connection gets its own deadline

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(REQUEST_SECONDS, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        cycle = self.cycle
        if cycle is not None and cycle.response_started:
            return  # the request arrived; the app is answering it
        if not self.transport.is_closing():
            self.transport.close()


# -- running it -------------------------------------------------------------------------------


MAX_HEADER_BYTES = 32 * 1024  # a push's headers are a few hundred bytes
MAX_CONNECTIONS = 100  # beyond this the receiver answers 503 at once
KEEP_ALIVE_SECONDS = 5


def _uvicorn_config(app: Starlette, **kwargs: Any) -> uvicorn.Config:
    """The server's own limits: header size, connections, idle keep-alive, request deadline."""
    return uvicorn.Config(
        app,
        lifespan="off",
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=10,
        http=DeadlineH11Protocol,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        limit_concurrency=MAX_CONNECTIONS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        **kwargs,
    )


def serve_webhooks(
    host: str,
    port: int,
    secret: str,
    data_dir: Path | str,
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_only_hmac: bool = False,
    log_level: str = "info",
) -> None:
    """Run the receiver in the foreground until interrupted (SIGINT/SIGTERM end it gracefully).

    Put TLS in front (a reverse proxy): the signature authenticates pushes but does not hide them.
    """
    inbox = WebhookInbox(Path(data_dir))
    app = create_webhook_app(
        secret=secret,
        inbox=inbox,
        tolerance_seconds=tolerance_seconds,
        max_body_bytes=max_body_bytes,
        body_only_hmac=body_only_hmac,
    )
    logger.info(
        "webhook receiver on http://%s:%d%s, inbox %s", host, port, WEBHOOK_PATH, inbox.path
    )
    uvicorn.Server(_uvicorn_config(app, host=host, port=port, log_level=log_level)).run()


@dataclass(frozen=True, slots=True)
class RunningReceiver:
    """Handle on a receiver started by :func:`run_webhook_receiver`."""

    base_url: str
    inbox: WebhookInbox
    app: Starlette

    @property
    def url(self) -> str:
        """The full URL of the webhook endpoint."""
        return self.base_url + WEBHOOK_PATH


@contextlib.contextmanager
def run_webhook_receiver(
    *,
    secret: str,
    data_dir: Path | str,
    host: str = "127.0.0.1",
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_only_hmac: bool = False,
    startup_timeout: float = 10.0,
) -> Iterator[RunningReceiver]:
    """Run the receiver in a background thread on a free port, for tests and local tools.

    The socket is bound before the thread starts, so there is no window in which another process
    can take the port; leaving the block stops the server and waits for in-flight requests.
    """
    inbox = WebhookInbox(Path(data_dir))
    app = create_webhook_app(
        secret=secret,
        inbox=inbox,
        tolerance_seconds=tolerance_seconds,
        max_body_bytes=max_body_bytes,
        body_only_hmac=body_only_hmac,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((host, 0))
        bound_host, port = sock.getsockname()[:2]
        # log_config=None: leave the host process's logging configuration alone.
        server = uvicorn.Server(_uvicorn_config(app, log_config=None, log_level="warning"))
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="webhook-receiver", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + startup_timeout
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("webhook receiver failed to start")
            if time.monotonic() > deadline:
                server.should_exit = True
                thread.join(startup_timeout)
                raise RuntimeError("webhook receiver did not start in time")
            time.sleep(0.01)
        try:
            yield RunningReceiver(base_url=f"http://{bound_host}:{port}", inbox=inbox, app=app)
        finally:
            server.should_exit = True
            thread.join(30)
    finally:
        sock.close()
