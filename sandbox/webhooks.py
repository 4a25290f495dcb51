"""Pushes reservation webhooks the way the service does: Standard Webhooks signing, retries.

A background thread drains a queue so the world never blocks on a slow receiver; each message
keeps its id across retries (receivers use it for idempotency) and is re-signed with a fresh
timestamp per attempt, as the Standard Webhooks spec expects.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
from standardwebhooks.webhooks import Webhook

from sandbox.world.clock import dtstr

TYPES = (
    "reservation.status_change",
    "reservation.stay_period_change",
    "reservation.bill_change",
    "reservation.payment_received",
    "reservation.refund_given",
)

_STOP = object()


class WebhookSender:
    """Queue + worker thread; POSTs signed JSON bodies with exponential backoff on failure."""

    def __init__(
        self,
        url: str,
        secret: str,
        *,
        webhook_id: int = 1,
        webhook_name: str = "reservations",
        max_attempts: int = 5,
        base_delay: float = 0.2,
        max_delay: float = 5.0,
        timeout: float = 5.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.signer = Webhook(secret)
        self.webhook_id = webhook_id
        self.webhook_name = webhook_name
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.timeout = timeout
        self.wall_clock = wall_clock
        self.delivered: list[str] = []
        self.failed: list[tuple[str, str]] = []
        self.attempts: dict[str, int] = {}
        self.disabled = False
        self._seq = 0
        self._queue: queue.Queue[Any] = queue.Queue()
        self._pending = 0
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="sandbox-webhooks", daemon=True)
        self._thread.start()

    def send(self, type_: str, data: dict[str, Any], occurred: datetime, sent: datetime) -> str:
        """Queue one notification; returns its id (also the webhook-id header)."""
        self._seq += 1
        msg_id = f"msg_{self.webhook_id}_{self._seq:08d}"
        body = {
            "notificationId": msg_id,
            "webhookId": self.webhook_id,
            "webhookName": self.webhook_name,
            "eventOccurred": dtstr(occurred),
            "sentDate": dtstr(sent),
            "type": type_,
            "data": data,
        }
        payload = json.dumps(body, separators=(",", ":"))
        with self._cond:
            if self._closed:
                return msg_id
            self._pending += 1
        self._queue.put((msg_id, payload))
        return msg_id

    def headers(self, msg_id: str, payload: str) -> dict[str, str]:
        ts = int(self.wall_clock())
        stamp = datetime.fromtimestamp(ts, tz=UTC)
        return {
            "content-type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(ts),
            "webhook-signature": self.signer.sign(msg_id, stamp, payload),
        }

    def _deliver(self, client: httpx.Client, msg_id: str, payload: str) -> None:
        if self.disabled:
            self.failed.append((msg_id, "endpoint disabled (410)"))
            return
        reason = ""
        for attempt in range(self.max_attempts):
            self.attempts[msg_id] = attempt + 1
            try:
                resp = client.post(
                    self.url, content=payload.encode(), headers=self.headers(msg_id, payload)
                )
                if 200 <= resp.status_code < 300:
                    self.delivered.append(msg_id)
                    return
                if resp.status_code == 410:  # the receiver asks us to stop for good
                    self.disabled = True
                    self.failed.append((msg_id, "410 Gone"))
                    return
                reason = f"HTTP {resp.status_code}"
            except httpx.HTTPError as exc:
                reason = f"{type(exc).__name__}: {exc}"
            if attempt + 1 < self.max_attempts:
                time.sleep(min(self.max_delay, self.base_delay * 2**attempt))
        self.failed.append((msg_id, reason))

    def _run(self) -> None:
        with httpx.Client(timeout=self.timeout) as client:
            while True:
                item = self._queue.get()
                if item is _STOP:
                    return
                try:
                    self._deliver(client, *item)
                except Exception as exc:  # never let the worker die: it would drop the queue
                    self.failed.append((item[0], f"{type(exc).__name__}: {exc}"))
                finally:
                    with self._cond:
                        self._pending -= 1
                        self._cond.notify_all()

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every queued message is delivered or given up; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._closed = True
        self._queue.put(_STOP)
        self._thread.join(timeout)
