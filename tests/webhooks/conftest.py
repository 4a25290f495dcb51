"""Shared helpers for the webhook receiver tests: a secret, signing, and payload builders."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook
from starlette.applications import Starlette

from pipelines.webhook_inbox import WebhookInbox
from pipelines.webhooks import WEBHOOK_PATH, create_webhook_app

SECRET = "whsec_" + base64.b64encode(b"reservoir-test-secret-0123456789").decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"someone-else-entirely-9876543210").decode()

_ids = itertools.count(1)


def new_id() -> str:
    return f"msg_test{next(_ids):06d}"


def payload(
    reservation_id: int = 4711,
    *,
    type_: str = "reservation.status_change",
    notification_id: str | None = None,
    sent: datetime | None = None,
    **data: Any,
) -> dict[str, Any]:
    moment = (sent or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.000")
    return {
        "notificationId": notification_id or new_id(),
        "webhookId": 3,
        "webhookName": "reservations",
        "eventOccurred": moment,
        "sentDate": moment,
        "type": type_,
        "data": {
            "reservationId": reservation_id,
            "reservationNumber": f"R{reservation_id}",
            "status": 21,
            "previousStatus": 12,
            **data,
        },
    }


def encode(body: dict[str, Any] | str | bytes) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


def signed_headers(
    body: bytes,
    *,
    secret: str = SECRET,
    msg_id: str | None = None,
    timestamp: int | None = None,
) -> dict[str, str]:
    """Standard Webhooks headers, signed by the reference library."""
    msg_id = msg_id or new_id()
    ts = int(time.time()) if timestamp is None else timestamp
    signature = Webhook(secret).sign(msg_id, datetime.fromtimestamp(ts, tz=UTC), body.decode())
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": signature,
        "content-type": "application/json",
    }


def body_only_signature(body: bytes, secret: str = SECRET) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    return "v1," + base64.b64encode(hmac.new(key, body, hashlib.sha256).digest()).decode()


@pytest.fixture
def inbox(tmp_path: Path) -> WebhookInbox:
    return WebhookInbox(tmp_path)


class AppClient:
    """Synchronous in-process client over ``httpx.ASGITransport``.

    Starlette's ``TestClient`` warns (an error under this project's warning filter) when used with
    ``httpx`` rather than ``httpx2``; the ASGI transport needs neither a thread nor a socket.
    """

    def __init__(self, app: Starlette) -> None:
        self.app = app

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                return await client.request(method, path, **kwargs)

        return asyncio.run(go())

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)


@pytest.fixture
def client(inbox: WebhookInbox) -> Iterator[AppClient]:
    yield AppClient(create_webhook_app(secret=SECRET, inbox=inbox))


def post(client: AppClient, body: bytes, headers: Any) -> httpx.Response:
    return client.post(WEBHOOK_PATH, content=body, headers=headers)
