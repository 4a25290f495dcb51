"""Receiver for signed ``reservation.*`` webhook pushes.

The service pushes a notification when a reservation changes; this ASGI app verifies it, stores it
in the durable :class:`~pipelines.webhook_inbox.WebhookInbox` and acknowledges. A sensor then
refreshes the named reservations. Pushes are a latency shortcut: the polled event feed stays the
source of truth, so the receiver may refuse anything it cannot trust without losing data.

Verification follows Standard Webhooks (``docs/contracts.md``, Webhooks): the signature in
``webhook-signature`` is HMAC-SHA256 over ``"{webhook-id}.{webhook-timestamp}.{raw body}"`` with the
base64-decoded ``whsec_`` secret. ``body_only_hmac=True`` switches to an HMAC over the raw body
alone, for senders that sign only the body (see ``docs/webhooks.md`` for what that mode trusts).

Status codes, each with a one-line JSON body ``{"status", "error", "code", "message"}`` on errors:

* ``202`` accepted and committed to the inbox; ``200`` ``{"status": "duplicate"}`` when the
  webhook id was accepted before (a 2xx, so the sender stops retrying a push we already hold);
* ``400`` missing or malformed headers, a timestamp outside the tolerance, a body that is not UTF-8
  JSON, or missing/invalid fields; ``401`` no signature entry matches; ``413`` body over the limit;
  ``422`` a correctly signed push of an unknown type; ``503`` the inbox could not commit (the
  sender retries).

The secret never leaves :func:`_decode_secret`: only the derived key is kept, inside the
``standardwebhooks`` signer, and no message, log line or exception carries it or a signature.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pipelines.webhook_inbox import Notification, WebhookInbox
from pipelines.webhook_verify import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_TOLERANCE_SECONDS,
    HEALTH_PATH,
    REASONS,
    WEBHOOK_PATH,
    Verifier,
    WebhookRejected,
    build_notification,
    check_fresh,
    check_id,
    decode_text,
    error_response,
    parse_json,
    parse_service_datetime,
    parse_timestamp_header,
    printable,
    reject,
    single_header,
)

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_TOLERANCE_SECONDS",
    "WEBHOOK_PATH",
    "WebhookRejected",
    "create_webhook_app",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Settings:
    tolerance_seconds: int
    max_body_bytes: int
    body_only_hmac: bool


async def _read_body(request: Request, limit: int) -> bytes:
    """The raw body, refusing more than ``limit`` bytes while reading.

    ``Content-Length`` only short-cuts the obvious case: a chunked body has none, and an ASGI server
    is not obliged to enforce it, so the streamed bytes are counted as well.
    """
    declared = request.headers.get("content-length")
    if (
        declared is not None
        and declared.isascii()
        and declared.strip().isdigit()
        and int(declared) > limit
    ):
        reject(413, "PAYLOAD_TOO_LARGE", f"body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async with contextlib.aclosing(request.stream()) as stream:
            async for chunk in stream:
                size += len(chunk)
                if size > limit:
                    reject(413, "PAYLOAD_TOO_LARGE", f"body is larger than {limit} bytes")
                chunks.append(chunk)
    except ClientDisconnect:
        reject(400, "CLIENT_DISCONNECTED", "client disconnected before the body was complete")
    return b"".join(chunks)


def _verify_and_parse(
    request: Request,
    body: bytes,
    *,
    verifier: Verifier,
    settings: _Settings,
    now: float,
    received_at: datetime,
) -> Notification:
    """All checks that need no I/O, in an order that rejects cheaply and reveals nothing.

    Standard mode checks the headers and the timestamp before computing an HMAC, then the
    signature, then the body. Body-only mode checks the signature first: the idempotency key and
    timestamp it trusts come from the (signed) body, so nothing is read before it is authentic.
    """
    signature = single_header(request, "webhook-signature", required=True)
    assert signature is not None
    if not settings.body_only_hmac:
        msg_id = check_id(
            single_header(request, "webhook-id", required=True) or "", "header webhook-id"
        )
        timestamp = parse_timestamp_header(
            single_header(request, "webhook-timestamp", required=True) or ""
        )
        check_fresh(timestamp, now, settings.tolerance_seconds)
        text = decode_text(body)
        if not verifier.standard(msg_id, timestamp, text, signature):
            reject(401, "INVALID_SIGNATURE", "no webhook-signature entry matches")
        payload = parse_json(text)
        return build_notification(payload, webhook_id=msg_id, received_at=received_at)

    if not verifier.body_only(body, signature):
        reject(401, "INVALID_SIGNATURE", "no webhook-signature entry matches")
    payload = parse_json(decode_text(body))
    # Only the signed body counts: the headers are not covered by a body-only signature, so a
    # captured body re-sent with a fresh webhook-id or timestamp would pass as new. A body
    # without its own id and time is refused (each replay of it would count as new).
    body_id = payload.get("notificationId")
    if body_id is None:
        reject(
            400,
            "MISSING_FIELD",
            "missing field notificationId: a body-only signature covers the body alone, so its "
            "id must be inside it (the webhook-id header is not signed)",
        )
    if isinstance(body_id, bool) or not isinstance(body_id, str | int):
        reject(400, "INVALID_FIELD", "field notificationId must be a string")
    msg_id = check_id(str(body_id), "field notificationId")
    sent = payload.get("sentDate")
    if sent is None:
        reject(
            400,
            "MISSING_FIELD",
            "missing field sentDate: a body-only signature covers the body alone, so its time "
            "must be inside it (the webhook-timestamp header is not signed)",
        )
    sent_at = parse_service_datetime(sent, "sentDate").timestamp()
    check_fresh(sent_at, now, settings.tolerance_seconds)
    return build_notification(payload, webhook_id=msg_id, received_at=received_at)


# -- the app ----------------------------------------------------------------------------------


def create_webhook_app(
    *,
    secret: str,
    inbox: WebhookInbox,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_only_hmac: bool = False,
    clock: Callable[[], float] = time.time,
) -> Starlette:
    """The receiver: ``POST /webhooks/reservations`` and ``GET /health``.

    ``clock`` (unix seconds) exists so tests can pin "now"; the secret is turned into a key here
    and not kept. Raises ``ValueError`` for a secret that is not ``whsec_<base64>``.
    """
    if tolerance_seconds < 0:
        raise ValueError("tolerance_seconds must be >= 0")
    if max_body_bytes < 1:
        raise ValueError("max_body_bytes must be >= 1")
    verifier = Verifier(secret, body_only=body_only_hmac)
    settings = _Settings(tolerance_seconds, max_body_bytes, body_only_hmac)

    async def receive(request: Request) -> Response:
        now = clock()
        received_at = datetime.fromtimestamp(now, tz=UTC)
        header_id = request.headers.get("webhook-id", "")
        try:
            body = await _read_body(request, settings.max_body_bytes)
            notification = _verify_and_parse(
                request,
                body,
                verifier=verifier,
                settings=settings,
                now=now,
                received_at=received_at,
            )
        except WebhookRejected as exc:
            logger.warning(
                "webhook rejected: %s %s (webhook-id %s)",
                exc.status,
                exc.code,
                printable(header_id) or "-",
            )
            return error_response(exc.status, exc.code, exc.message)

        try:
            # sqlite commits with fsync; keep that off the event loop.
            added = await run_in_threadpool(inbox.add, notification)
        except Exception as exc:
            logger.error(
                "webhook %s not stored: inbox error %s",
                printable(notification.webhook_id),
                type(exc).__name__,
            )
            return error_response(503, "INBOX_UNAVAILABLE", "could not store the notification")

        if not added:
            logger.info("webhook duplicate: %s", printable(notification.webhook_id))
            return JSONResponse(
                {"status": "duplicate", "webhookId": notification.webhook_id}, status_code=200
            )
        logger.info(
            "webhook accepted: %s %s reservation %d",
            printable(notification.webhook_id),
            notification.type,
            notification.reservation_id,
        )
        return JSONResponse(
            {"status": "accepted", "webhookId": notification.webhook_id}, status_code=202
        )

    async def health(request: Request) -> Response:
        try:
            counts = await run_in_threadpool(inbox.counts)
        except Exception as exc:
            logger.error("inbox unavailable: %s", type(exc).__name__)
            return error_response(503, "INBOX_UNAVAILABLE", "inbox unavailable")
        return JSONResponse({"status": "ok", "inbox": counts})

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = REASONS.get(exc.status_code, "HTTP_ERROR")
        response = error_response(exc.status_code, code, str(exc.detail))
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    async def server_error(request: Request, exc: Exception) -> Response:
        # Log the type only: exception text could quote request data.
        logger.error("webhook receiver error: %s", type(exc).__name__)
        return error_response(500, "INTERNAL", "internal error")

    app = Starlette(
        routes=[
            Route(WEBHOOK_PATH, receive, methods=["POST"]),
            Route(HEALTH_PATH, health, methods=["GET"]),
        ],
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )
    app.state.inbox = inbox
    return app
