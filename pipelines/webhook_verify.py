"""Verifying one webhook push: the signature (Standard Webhooks), its id and timestamp, and the
body parsed into a `Notification`; everything a forged, replayed or malformed push is refused
for, with the reason. The receiver's HTTP side is `pipelines/webhooks.py`."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, NoReturn

from standardwebhooks.webhooks import EmptyWebhookSecretError, Webhook
from starlette.requests import Request
from starlette.responses import JSONResponse

from pipelines.webhook_inbox import KNOWN_TYPES, Notification, normalise_type

logger = logging.getLogger("pipelines.webhooks")  # one logger for the receiver

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

REASONS = {
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


def reject(status: int, code: str, message: str) -> NoReturn:
    raise WebhookRejected(status, code, message)


def error_response(status: int, code: str, message: str) -> JSONResponse:
    body = {
        "status": status,
        "error": REASONS.get(status, "ERROR"),
        "code": code,
        "message": message,
    }
    return JSONResponse(body, status_code=status)


def printable(value: str, limit: int = 80) -> str:
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


class Verifier:
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


def single_header(request: Request, name: str, *, required: bool) -> str | None:
    values = request.headers.getlist(name)
    if not values:
        if required:
            reject(400, "MISSING_HEADER", f"missing header {name}")
        return None
    if len(values) > 1:
        reject(400, "INVALID_HEADER", f"header {name} appears more than once")
    return values[0]


def check_id(value: str, what: str) -> str:
    if not _ID_RE.fullmatch(value):
        reject(
            400,
            "INVALID_HEADER" if what.startswith("header") else "INVALID_FIELD",
            f"{what} must be 1-256 visible ASCII characters",
        )
    return value


def parse_timestamp_header(value: str) -> int:
    if not _TIMESTAMP_RE.fullmatch(value):
        reject(400, "INVALID_HEADER", "header webhook-timestamp must be integer unix seconds")
    return int(value)


def check_fresh(timestamp: float, now: float, tolerance: int) -> None:
    skew = now - timestamp
    if skew > tolerance:
        reject(
            400,
            "STALE_TIMESTAMP",
            f"timestamp is {int(skew)} s in the past; tolerance is {tolerance} s",
        )
    if -skew > tolerance:
        reject(
            400,
            "STALE_TIMESTAMP",
            f"timestamp is {int(-skew)} s in the future; tolerance is {tolerance} s",
        )


def parse_service_datetime(value: Any, field: str) -> datetime:
    """ISO 8601 datetimes as the service writes them (UTC, offset optional)."""
    if not isinstance(value, str) or len(value) > 64:
        reject(400, "INVALID_FIELD", f"{field} must be an ISO 8601 datetime string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        reject(400, "INVALID_FIELD", f"{field} must be an ISO 8601 datetime string")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except (OverflowError, ValueError):
        reject(400, "INVALID_FIELD", f"{field} is out of range")


def _reject_constant(name: str) -> NoReturn:
    reject(400, "MALFORMED_BODY", f"body is not valid JSON ({name} is not allowed)")


def decode_text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        reject(400, "MALFORMED_BODY", "body is not UTF-8")


def parse_json(text: str) -> dict[str, Any]:
    try:
        payload = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        reject(400, "MALFORMED_BODY", "body is not valid JSON")
    if not isinstance(payload, dict):
        reject(400, "MALFORMED_BODY", "body must be a JSON object")
    return payload


def build_notification(
    payload: Mapping[str, Any], *, webhook_id: str, received_at: datetime
) -> Notification:
    """Check the fields the pipeline needs; keep the rest as received in ``data``.

    Only ``type`` and ``data.reservationId`` are required: the sensor needs nothing else, and
    refusing a push over an optional field would make the sender retry it for days.
    """
    raw_type = payload.get("type")
    if raw_type is None:
        reject(400, "MISSING_FIELD", "missing field type")
    if not isinstance(raw_type, str):
        reject(400, "INVALID_FIELD", "field type must be a string")
    event_type = normalise_type(raw_type)
    if event_type is None:
        reject(
            422, "UNKNOWN_TYPE", f"unknown type; expected one of {', '.join(sorted(KNOWN_TYPES))}"
        )

    data = payload.get("data")
    if data is None:
        reject(400, "MISSING_FIELD", "missing field data")
    if not isinstance(data, dict):
        reject(400, "INVALID_FIELD", "field data must be an object")
    reservation_id = data.get("reservationId")
    if reservation_id is None:
        reject(400, "MISSING_FIELD", "missing field data.reservationId")
    if (
        not isinstance(reservation_id, int)
        or isinstance(reservation_id, bool)
        or not 0 < reservation_id <= _MAX_RESERVATION_ID
    ):
        reject(400, "INVALID_FIELD", "field data.reservationId must be a positive integer")

    occurred = payload.get("eventOccurred")
    event_occurred = None if occurred is None else parse_service_datetime(occurred, "eventOccurred")
    notification_id = payload.get("notificationId")
    if notification_id is not None and (
        isinstance(notification_id, bool) or not isinstance(notification_id, str | int)
    ):
        reject(400, "INVALID_FIELD", "field notificationId must be a string")

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
