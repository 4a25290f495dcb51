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

import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import uvicorn
from standardwebhooks.webhooks import EmptyWebhookSecretError, Webhook
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pipelines.webhook_inbox import KNOWN_TYPES, Notification, WebhookInbox, normalise_type

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_TOLERANCE_SECONDS",
    "WEBHOOK_PATH",
    "RunningReceiver",
    "WebhookRejected",
    "create_webhook_app",
    "run_webhook_receiver",
    "serve_webhooks",
]

logger = logging.getLogger(__name__)

WEBHOOK_PATH = "/webhooks/reservations"
HEALTH_PATH = "/health"
DEFAULT_TOLERANCE_SECONDS = 300
DEFAULT_MAX_BODY_BYTES = 256 * 1024

_SECRET_PREFIX = "whsec_"
# Standard Webhooks ids look like ``msg_2KWPBgLlAfxdpx2AI54pPJ85f4W``; any visible ASCII is allowed,
# bounded so a hostile id cannot bloat the inbox or the logs.
_ID_RE = re.compile(r"[\x21-\x7e]{1,256}")
# Integer unix seconds, without leading zeros: the signed content holds the header verbatim while
# the library formats the integer, so both spellings must be the same.
_TIMESTAMP_RE = re.compile(r"0|[1-9][0-9]{0,14}")
_MAX_RESERVATION_ID = 2**63 - 1  # SQLite INTEGER / lake int64

_REASONS = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    422: "UNPROCESSABLE_ENTITY",
    500: "INTERNAL_SERVER_ERROR",
    503: "SERVICE_UNAVAILABLE",
}


class WebhookRejected(Exception):
    """A push the receiver refuses; carries the HTTP status and a machine-readable code.

    The message is safe to return and log: it never holds the secret, a signature or the body.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _reject(status: int, code: str, message: str) -> NoReturn:
    raise WebhookRejected(status, code, message)


def _error_response(status: int, code: str, message: str) -> JSONResponse:
    body = {
        "status": status,
        "error": _REASONS.get(status, "ERROR"),
        "code": code,
        "message": message,
    }
    return JSONResponse(body, status_code=status)


def _printable(value: str, limit: int = 80) -> str:
    """Hostile header values, shortened and escaped, for log lines."""
    text = value if len(value) <= limit else value[:limit] + "..."
    return text.encode("unicode_escape").decode("ascii")


# -- secret and signatures --------------------------------------------------------------------


def _decode_secret(secret: str) -> bytes:
    """The HMAC key: the secret without ``whsec_``, base64-decoded (Standard Webhooks).

    Stricter than the library, which silently drops non-base64 characters: a mistyped secret
    should fail at start-up, not turn every push into a 401. Error messages never echo the secret.
    """
    if not isinstance(secret, str):
        raise TypeError("webhook secret must be a str of the form whsec_<base64>")
    encoded = secret.removeprefix(_SECRET_PREFIX).strip()
    encoded += "=" * (-len(encoded) % 4)
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("webhook secret is not valid base64 (expected whsec_<base64>)") from None
    if not key:
        raise ValueError("webhook secret is empty (expected whsec_<base64>)")
    return key


def _signature_entries(header: str) -> Iterator[bytes]:
    """Decoded ``v1`` signatures from a space-separated header; malformed entries are skipped.

    Several entries appear during secret rotation, other versions (``v1a`` = ed25519) are not ours.
    Skipping instead of failing keeps one odd entry from hiding a valid one.
    """
    for entry in header.split(" "):
        version, sep, encoded = entry.partition(",")
        if not sep or version != "v1" or not encoded:
            continue
        try:
            yield base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            continue


def _any_matches(expected: bytes, header: str) -> bool:
    matched = False
    for candidate in _signature_entries(header):
        # No early exit: the time taken does not depend on which entry matched.
        matched |= hmac.compare_digest(expected, candidate)
    return matched


class _Verifier:
    """Checks signatures and timestamps; holds the derived key, never the secret text.

    Standard mode uses ``standardwebhooks.Webhook.sign`` to compute the expected signature rather
    than ``Webhook.verify``, because ``verify`` has a fixed 5-minute tolerance, accepts
    ``float()`` timestamps such as ``1e9`` and raises ``ValueError``/``binascii.Error`` (a 500) on a
    malformed signature entry. The header parsing and the constant-time compare are done here.
    """

    __slots__ = ("_body_key", "_signer")

    def __init__(self, secret: str, *, body_only: bool) -> None:
        key = _decode_secret(secret)
        try:
            self._signer = Webhook(key)
        except EmptyWebhookSecretError:  # pragma: no cover - _decode_secret refuses empty keys
            raise ValueError("webhook secret is empty") from None
        self._body_key = key if body_only else None

    def __repr__(self) -> str:
        return "<webhook verifier>"

    def standard(self, msg_id: str, timestamp: int, text: str, header: str) -> bool:
        signed = self._signer.sign(msg_id, datetime.fromtimestamp(timestamp, tz=UTC), text)
        expected = base64.b64decode(signed.partition(",")[2])
        return _any_matches(expected, header)

    def body_only(self, body: bytes, header: str) -> bool:
        assert self._body_key is not None
        expected = hmac.new(self._body_key, body, hashlib.sha256).digest()
        return _any_matches(expected, header)


# -- request parsing --------------------------------------------------------------------------


def _single_header(request: Request, name: str, *, required: bool) -> str | None:
    values = request.headers.getlist(name)
    if not values:
        if required:
            _reject(400, "MISSING_HEADER", f"missing header {name}")
        return None
    if len(values) > 1:
        _reject(400, "INVALID_HEADER", f"header {name} appears more than once")
    return values[0]


def _check_id(value: str, what: str) -> str:
    if not _ID_RE.fullmatch(value):
        _reject(
            400,
            "INVALID_HEADER" if what.startswith("header") else "INVALID_FIELD",
            f"{what} must be 1-256 visible ASCII characters",
        )
    return value


def _parse_timestamp_header(value: str) -> int:
    if not _TIMESTAMP_RE.fullmatch(value):
        _reject(400, "INVALID_HEADER", "header webhook-timestamp must be integer unix seconds")
    return int(value)


def _check_fresh(timestamp: float, now: float, tolerance: int) -> None:
    skew = now - timestamp
    if skew > tolerance:
        _reject(
            400,
            "STALE_TIMESTAMP",
            f"timestamp is {int(skew)} s in the past; tolerance is {tolerance} s",
        )
    if -skew > tolerance:
        _reject(
            400,
            "STALE_TIMESTAMP",
            f"timestamp is {int(-skew)} s in the future; tolerance is {tolerance} s",
        )


def _parse_service_datetime(value: Any, field: str) -> datetime:
    """ISO 8601 datetimes as the service writes them (UTC, offset optional)."""
    if not isinstance(value, str) or len(value) > 64:
        _reject(400, "INVALID_FIELD", f"{field} must be an ISO 8601 datetime string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        _reject(400, "INVALID_FIELD", f"{field} must be an ISO 8601 datetime string")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except (OverflowError, ValueError):
        _reject(400, "INVALID_FIELD", f"{field} is out of range")


def _reject_constant(name: str) -> NoReturn:
    _reject(400, "MALFORMED_BODY", f"body is not valid JSON ({name} is not allowed)")


def _decode_text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        _reject(400, "MALFORMED_BODY", "body is not UTF-8")


def _parse_json(text: str) -> dict[str, Any]:
    try:
        payload = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        _reject(400, "MALFORMED_BODY", "body is not valid JSON")
    if not isinstance(payload, dict):
        _reject(400, "MALFORMED_BODY", "body must be a JSON object")
    return payload


def _build_notification(
    payload: Mapping[str, Any], *, webhook_id: str, received_at: datetime
) -> Notification:
    """Check the fields the pipeline needs; keep the rest as received in ``data``.

    Only ``type`` and ``data.reservationId`` are required: the sensor needs nothing else, and
    refusing a push over an optional field would make the sender retry it for days.
    """
    raw_type = payload.get("type")
    if raw_type is None:
        _reject(400, "MISSING_FIELD", "missing field type")
    if not isinstance(raw_type, str):
        _reject(400, "INVALID_FIELD", "field type must be a string")
    event_type = normalise_type(raw_type)
    if event_type is None:
        _reject(
            422, "UNKNOWN_TYPE", f"unknown type; expected one of {', '.join(sorted(KNOWN_TYPES))}"
        )

    data = payload.get("data")
    if data is None:
        _reject(400, "MISSING_FIELD", "missing field data")
    if not isinstance(data, dict):
        _reject(400, "INVALID_FIELD", "field data must be an object")
    reservation_id = data.get("reservationId")
    if reservation_id is None:
        _reject(400, "MISSING_FIELD", "missing field data.reservationId")
    if (
        not isinstance(reservation_id, int)
        or isinstance(reservation_id, bool)
        or not 0 < reservation_id <= _MAX_RESERVATION_ID
    ):
        _reject(400, "INVALID_FIELD", "field data.reservationId must be a positive integer")

    occurred = payload.get("eventOccurred")
    event_occurred = (
        None if occurred is None else _parse_service_datetime(occurred, "eventOccurred")
    )
    notification_id = payload.get("notificationId")
    if notification_id is not None and (
        isinstance(notification_id, bool) or not isinstance(notification_id, str | int)
    ):
        _reject(400, "INVALID_FIELD", "field notificationId must be a string")

    return Notification(
        webhook_id=webhook_id,
        received_at=received_at,
        event_occurred=event_occurred,
        type=event_type,
        type_raw=raw_type,
        reservation_id=reservation_id,
        notification_id=None if notification_id is None else str(notification_id),
        data=data,
    )


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
        _reject(413, "PAYLOAD_TOO_LARGE", f"body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    try:
        async with contextlib.aclosing(request.stream()) as stream:
            async for chunk in stream:
                size += len(chunk)
                if size > limit:
                    _reject(413, "PAYLOAD_TOO_LARGE", f"body is larger than {limit} bytes")
                chunks.append(chunk)
    except ClientDisconnect:
        _reject(400, "CLIENT_DISCONNECTED", "client disconnected before the body was complete")
    return b"".join(chunks)


def _verify_and_parse(
    request: Request,
    body: bytes,
    *,
    verifier: _Verifier,
    settings: _Settings,
    now: float,
    received_at: datetime,
) -> Notification:
    """All checks that need no I/O, in an order that rejects cheaply and reveals nothing.

    Standard mode checks the headers and the timestamp before computing an HMAC, then the
    signature, then the body. Body-only mode checks the signature first: the idempotency key and
    timestamp it trusts come from the (signed) body, so nothing is read before it is authentic.
    """
    signature = _single_header(request, "webhook-signature", required=True)
    assert signature is not None
    if not settings.body_only_hmac:
        msg_id = _check_id(
            _single_header(request, "webhook-id", required=True) or "", "header webhook-id"
        )
        timestamp = _parse_timestamp_header(
            _single_header(request, "webhook-timestamp", required=True) or ""
        )
        _check_fresh(timestamp, now, settings.tolerance_seconds)
        text = _decode_text(body)
        if not verifier.standard(msg_id, timestamp, text, signature):
            _reject(401, "INVALID_SIGNATURE", "no webhook-signature entry matches")
        payload = _parse_json(text)
        return _build_notification(payload, webhook_id=msg_id, received_at=received_at)

    if not verifier.body_only(body, signature):
        _reject(401, "INVALID_SIGNATURE", "no webhook-signature entry matches")
    payload = _parse_json(_decode_text(body))
    # Prefer the signed body fields: the headers are not covered by a body-only signature, so a
    # captured body re-sent with a fresh webhook-id or timestamp must still count as a replay.
    body_id = payload.get("notificationId")
    if body_id is not None:
        if isinstance(body_id, bool) or not isinstance(body_id, str | int):
            _reject(400, "INVALID_FIELD", "field notificationId must be a string")
        msg_id = _check_id(str(body_id), "field notificationId")
    else:
        header_id = _single_header(request, "webhook-id", required=False)
        if header_id is None:
            _reject(400, "MISSING_FIELD", "missing field notificationId (or header webhook-id)")
        msg_id = _check_id(header_id, "header webhook-id")
    sent = payload.get("sentDate")
    if sent is not None:
        sent_at = _parse_service_datetime(sent, "sentDate").timestamp()
    else:
        header_ts = _single_header(request, "webhook-timestamp", required=False)
        if header_ts is None:
            _reject(400, "MISSING_FIELD", "missing field sentDate (or header webhook-timestamp)")
        sent_at = float(_parse_timestamp_header(header_ts))
    _check_fresh(sent_at, now, settings.tolerance_seconds)
    return _build_notification(payload, webhook_id=msg_id, received_at=received_at)


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
    verifier = _Verifier(secret, body_only=body_only_hmac)
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
                _printable(header_id) or "-",
            )
            return _error_response(exc.status, exc.code, exc.message)

        try:
            # sqlite commits with fsync; keep that off the event loop.
            added = await run_in_threadpool(inbox.add, notification)
        except Exception as exc:
            logger.error(
                "webhook %s not stored: inbox error %s",
                _printable(notification.webhook_id),
                type(exc).__name__,
            )
            return _error_response(503, "INBOX_UNAVAILABLE", "could not store the notification")

        if not added:
            logger.info("webhook duplicate: %s", _printable(notification.webhook_id))
            return JSONResponse(
                {"status": "duplicate", "webhookId": notification.webhook_id}, status_code=200
            )
        logger.info(
            "webhook accepted: %s %s reservation %d",
            _printable(notification.webhook_id),
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
            return _error_response(503, "INBOX_UNAVAILABLE", "inbox unavailable")
        return JSONResponse({"status": "ok", "inbox": counts})

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = _REASONS.get(exc.status_code, "HTTP_ERROR")
        response = _error_response(exc.status_code, code, str(exc.detail))
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    async def server_error(request: Request, exc: Exception) -> Response:
        # Log the type only: exception text could quote request data.
        logger.error("webhook receiver error: %s", type(exc).__name__)
        return _error_response(500, "INTERNAL", "internal error")

    app = Starlette(
        routes=[
            Route(WEBHOOK_PATH, receive, methods=["POST"]),
            Route(HEALTH_PATH, health, methods=["GET"]),
        ],
        exception_handlers={HTTPException: http_error, Exception: server_error},
    )
    app.state.inbox = inbox
    return app


# -- running it -------------------------------------------------------------------------------


def _uvicorn_config(app: Starlette, **kwargs: Any) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        lifespan="off",
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=10,
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
