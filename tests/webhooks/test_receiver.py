"""The receiver's decisions, in-process (Starlette AppClient): what is accepted, what is refused."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from pipelines.webhook_inbox import KNOWN_TYPES, Notification, WebhookInbox
from pipelines.webhooks import WEBHOOK_PATH, create_webhook_app

from .conftest import (
    OTHER_SECRET,
    SECRET,
    AppClient,
    body_only_signature,
    encode,
    new_id,
    payload,
    post,
    signed_headers,
)


def _assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert "\n" not in response.text.strip()
    body = response.json()
    assert body["status"] == status
    assert body["code"] == code
    assert body["message"]
    assert response.headers["content-type"].startswith("application/json")


# -- accepted -------------------------------------------------------------------------------


def test_valid_push_is_accepted_and_stored(client: AppClient, inbox: WebhookInbox) -> None:
    body = encode(payload(4711))
    headers = signed_headers(body, msg_id="msg_accept1")
    response = post(client, body, headers)
    assert response.status_code == 202
    assert response.json() == {"status": "accepted", "webhookId": "msg_accept1"}
    (stored,) = inbox.pending()
    assert stored.webhook_id == "msg_accept1"
    assert stored.reservation_id == 4711
    assert stored.type == "reservation.status_change"
    assert stored.data == json.loads(body)["data"]
    assert stored.event_occurred is not None and stored.event_occurred.tzinfo is not None
    assert inbox.reservation_ids_pending() == [4711]


@pytest.mark.parametrize("event_type", sorted(KNOWN_TYPES))
def test_every_interface_type_is_accepted(
    client: AppClient, inbox: WebhookInbox, event_type: str
) -> None:
    body = encode(payload(1, type_=event_type))
    assert post(client, body, signed_headers(body)).status_code == 202
    assert [n.type for n in inbox.pending()] == [event_type]


def test_dotted_status_variant_is_accepted_and_normalised(
    client: AppClient, inbox: WebhookInbox
) -> None:
    body = encode(payload(12, type_="reservation.status.changed"))
    assert post(client, body, signed_headers(body)).status_code == 202
    (stored,) = inbox.pending()
    assert stored.type == "reservation.status_change"
    assert stored.type_raw == "reservation.status.changed"


def test_any_matching_entry_of_a_rotated_signature_header_is_accepted(client: AppClient) -> None:
    body = encode(payload(5))
    good = signed_headers(body)
    stale_key = signed_headers(
        body,
        secret=OTHER_SECRET,
        msg_id=good["webhook-id"],
        timestamp=int(good["webhook-timestamp"]),
    )
    good["webhook-signature"] = " ".join(
        [
            "v1a,ZWQyNTUxOQ==",
            "garbage",
            "v1,not*base64",
            stale_key["webhook-signature"],
            good["webhook-signature"],
        ]
    )
    assert post(client, body, good).status_code == 202


def test_verification_uses_the_raw_bytes(client: AppClient, inbox: WebhookInbox) -> None:
    # Odd spacing, key order and escapes: re-serialising would change the bytes and the HMAC.
    body = (
        b'{ "type":"reservation.bill_change" ,\n "data": {"reservationId": 77, "x": "\\u00fc"},'
        b'"eventOccurred":"2025-05-01T10:00:00.123"  }'
    )
    assert post(client, body, signed_headers(body)).status_code == 202
    assert inbox.pending()[0].data == {"reservationId": 77, "x": "ü"}


def test_optional_fields_may_be_absent(client: AppClient, inbox: WebhookInbox) -> None:
    body = encode({"type": "reservation.payment_received", "data": {"reservationId": 3}})
    assert post(client, body, signed_headers(body)).status_code == 202
    assert inbox.pending()[0].event_occurred is None


# -- replays ----------------------------------------------------------------------------------


def test_replay_is_acknowledged_as_duplicate_and_not_stored_twice(
    client: AppClient, inbox: WebhookInbox
) -> None:
    body = encode(payload(9))
    headers = signed_headers(body, msg_id="msg_replayed")
    assert post(client, body, headers).status_code == 202
    again = post(client, body, headers)
    assert again.status_code == 200
    assert again.json() == {"status": "duplicate", "webhookId": "msg_replayed"}
    # A sender retry re-signs with a new timestamp but keeps the id: still a duplicate.
    retry = signed_headers(body, msg_id="msg_replayed", timestamp=int(time.time()) + 5)
    assert post(client, body, retry).json()["status"] == "duplicate"
    assert inbox.counts()["total"] == 1


def test_duplicate_after_processing_is_still_a_duplicate(
    client: AppClient, inbox: WebhookInbox
) -> None:
    body = encode(payload(9))
    headers = signed_headers(body)
    post(client, body, headers)
    inbox.mark_processed([headers["webhook-id"]])
    assert post(client, body, headers).status_code == 200
    assert inbox.reservation_ids_pending() == []


# -- forged -----------------------------------------------------------------------------------


def test_wrong_secret_is_unauthorised(client: AppClient, inbox: WebhookInbox) -> None:
    body = encode(payload(1))
    _assert_error(
        post(client, body, signed_headers(body, secret=OTHER_SECRET)), 401, "INVALID_SIGNATURE"
    )
    assert inbox.counts()["total"] == 0


def test_altered_body_is_unauthorised(client: AppClient, inbox: WebhookInbox) -> None:
    body = encode(payload(1))
    headers = signed_headers(body)
    tampered = body.replace(b'"reservationId": 1', b'"reservationId": 2')
    assert tampered != body
    _assert_error(post(client, tampered, headers), 401, "INVALID_SIGNATURE")
    assert inbox.counts()["total"] == 0


@pytest.mark.parametrize("header", ["webhook-id", "webhook-timestamp"])
def test_altered_signed_header_is_unauthorised(client: AppClient, header: str) -> None:
    body = encode(payload(1))
    headers = signed_headers(body)
    headers[header] = "msg_other" if header == "webhook-id" else str(int(time.time()) - 1)
    _assert_error(post(client, body, headers), 401, "INVALID_SIGNATURE")


@pytest.mark.parametrize(
    "signature", ["", "v1,", "v1", "v2,abcd", "v1,!!!", "v1,AAAA", "v1a,AAAA v2,BBBB"]
)
def test_malformed_signature_values_are_unauthorised_not_errors(
    client: AppClient, signature: str
) -> None:
    body = encode(payload(1))
    headers = signed_headers(body)
    headers["webhook-signature"] = signature
    _assert_error(post(client, body, headers), 401, "INVALID_SIGNATURE")


def test_forged_and_stale_reveals_only_staleness(client: AppClient) -> None:
    body = encode(payload(1))
    headers = signed_headers(body, secret=OTHER_SECRET, timestamp=int(time.time()) - 3600)
    _assert_error(post(client, body, headers), 400, "STALE_TIMESTAMP")


# -- timestamps -------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [-301 - 60, -3600 * 24, 301 + 60, 3600 * 24 * 365])
def test_timestamps_outside_the_tolerance_are_refused(
    client: AppClient, inbox: WebhookInbox, offset: int
) -> None:
    body = encode(payload(1))
    response = post(client, body, signed_headers(body, timestamp=int(time.time()) + offset))
    _assert_error(response, 400, "STALE_TIMESTAMP")
    assert ("future" in response.json()["message"]) == (offset > 0)
    assert inbox.counts()["total"] == 0


def test_tolerance_is_a_setting_and_now_is_pinnable(inbox: WebhookInbox) -> None:
    now = 1_700_000_000
    app = create_webhook_app(secret=SECRET, inbox=inbox, tolerance_seconds=10, clock=lambda: now)
    client = AppClient(app)
    body = encode(payload(1))
    assert post(client, body, signed_headers(body, timestamp=now - 10)).status_code == 202
    body = encode(payload(1))
    response = post(client, body, signed_headers(body, timestamp=now + 11))
    _assert_error(response, 400, "STALE_TIMESTAMP")


@pytest.mark.parametrize(
    "value", ["", "abc", "1e9", "1700000000.5", "-5", "01700000000", "²".encode("latin-1")]
)
def test_malformed_timestamp_header_is_bad_request(client: AppClient, value: str | bytes) -> None:
    body = encode(payload(1))
    headers: dict[str, str | bytes] = {**signed_headers(body)}
    headers["webhook-timestamp"] = value
    _assert_error(post(client, body, headers), 400, "INVALID_HEADER")


# -- size -------------------------------------------------------------------------------------


def test_oversized_body_by_content_length(inbox: WebhookInbox) -> None:
    app = create_webhook_app(secret=SECRET, inbox=inbox, max_body_bytes=1024)
    client = AppClient(app)
    body = encode(payload(1, filler="x" * 2000))
    _assert_error(post(client, body, signed_headers(body)), 413, "PAYLOAD_TOO_LARGE")
    body = encode(payload(1))
    assert len(body) <= 1024
    assert post(client, body, signed_headers(body)).status_code == 202


def test_oversized_body_with_understated_content_length(inbox: WebhookInbox) -> None:
    """Content-Length is not trusted: the streamed bytes are counted."""
    app = create_webhook_app(secret=SECRET, inbox=inbox, max_body_bytes=1024)
    body = encode(payload(1, filler="x" * 4000))
    headers = signed_headers(body)
    sent: list[dict[str, Any]] = []
    chunks = [body[i : i + 500] for i in range(0, len(body), 500)]

    async def receive() -> dict[str, Any]:
        if chunks:
            chunk = chunks.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}
        await asyncio.sleep(3600)  # pragma: no cover - the app stops reading before this
        return {"type": "http.disconnect"}  # pragma: no cover

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": WEBHOOK_PATH,
        "raw_path": WEBHOOK_PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-length", b"100")]
        + [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
    }
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["code"] == "PAYLOAD_TOO_LARGE"
    assert chunks  # it stopped reading early
    assert inbox.counts()["total"] == 0


# -- malformed --------------------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_missing_header_is_bad_request(client: AppClient, missing: str) -> None:
    body = encode(payload(1))
    headers = signed_headers(body)
    del headers[missing]
    response = post(client, body, headers)
    _assert_error(response, 400, "MISSING_HEADER")
    assert missing in response.json()["message"]


def test_repeated_header_is_bad_request(client: AppClient) -> None:
    body = encode(payload(1))
    headers = [*signed_headers(body).items(), ("webhook-id", "msg_second")]
    response = client.post(WEBHOOK_PATH, content=body, headers=headers)
    _assert_error(response, 400, "INVALID_HEADER")


@pytest.mark.parametrize("msg_id", ["has space", "x" * 257, "tab\there"])
def test_odd_webhook_id_is_bad_request(client: AppClient, msg_id: str) -> None:
    body = encode(payload(1))
    _assert_error(post(client, body, signed_headers(body, msg_id=msg_id)), 400, "INVALID_HEADER")


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b"",
        b"[1, 2]",
        b'"just a string"',
        b'{"type": "reservation.bill_change", "data": {"reservationId": NaN}}',
        b"[" * 5000 + b"]" * 5000,
    ],
)
def test_signed_but_malformed_json_is_bad_request(client: AppClient, raw: bytes) -> None:
    _assert_error(post(client, raw, signed_headers(raw)), 400, "MALFORMED_BODY")


def test_non_utf8_body_is_bad_request(client: AppClient) -> None:
    raw = b'{"type": "\xff"}'
    headers = signed_headers(b"{}")
    _assert_error(post(client, raw, headers), 400, "MALFORMED_BODY")


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda p: p["data"].pop("reservationId"), "MISSING_FIELD"),
        (lambda p: p.pop("data"), "MISSING_FIELD"),
        (lambda p: p.pop("type"), "MISSING_FIELD"),
        (lambda p: p["data"].update(reservationId="4711"), "INVALID_FIELD"),
        (lambda p: p["data"].update(reservationId=True), "INVALID_FIELD"),
        (lambda p: p["data"].update(reservationId=0), "INVALID_FIELD"),
        (lambda p: p["data"].update(reservationId=2**64), "INVALID_FIELD"),
        (lambda p: p["data"].update(reservationId=1.5), "INVALID_FIELD"),
        (lambda p: p.update(data=[1]), "INVALID_FIELD"),
        (lambda p: p.update(type=5), "INVALID_FIELD"),
        (lambda p: p.update(eventOccurred="yesterday"), "INVALID_FIELD"),
        (lambda p: p.update(notificationId={"a": 1}), "INVALID_FIELD"),
    ],
)
def test_missing_or_invalid_fields_are_bad_request(
    client: AppClient, inbox: WebhookInbox, mutate: Any, code: str
) -> None:
    document = payload(1)
    mutate(document)
    body = encode(document)
    _assert_error(post(client, body, signed_headers(body)), 400, code)
    assert inbox.counts()["total"] == 0


def test_unknown_type_is_unprocessable(client: AppClient, inbox: WebhookInbox) -> None:
    body = encode(payload(1, type_="customer.created"))
    _assert_error(post(client, body, signed_headers(body)), 422, "UNKNOWN_TYPE")
    assert inbox.counts()["total"] == 0


# -- routes, health, secrets ------------------------------------------------------------------


def test_health_reports_inbox_counts(client: AppClient) -> None:
    body = encode(payload(1))
    post(client, body, signed_headers(body))
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "inbox": {"total": 1, "pending": 1, "processed": 0}}


def test_other_routes_and_methods_answer_json(client: AppClient) -> None:
    _assert_error(client.get(WEBHOOK_PATH), 405, "METHOD_NOT_ALLOWED")
    _assert_error(client.post("/elsewhere", content=b"{}"), 404, "NOT_FOUND")


@pytest.mark.parametrize("secret", ["whsec_", "whsec_***not-base64***", "", "whsec_YQ=x"])
def test_bad_secret_fails_at_startup_without_echoing_it(inbox: WebhookInbox, secret: str) -> None:
    with pytest.raises(ValueError) as info:
        create_webhook_app(secret=secret, inbox=inbox)
    if secret.removeprefix("whsec_"):
        assert secret.removeprefix("whsec_") not in str(info.value)
    assert info.value.__cause__ is None


def test_secret_and_signatures_never_appear_in_responses_or_logs(
    client: AppClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    key_b64 = SECRET.removeprefix("whsec_")
    texts: list[str] = []
    signatures: list[str] = []
    for secret in (SECRET, OTHER_SECRET):
        for document in (payload(1), payload(1, type_="nope"), {"type": 1}):
            body = encode(document)
            headers = signed_headers(body, secret=secret)
            signatures.append(headers["webhook-signature"].partition(",")[2])
            response = post(client, body, headers)
            texts.append(response.text)
            texts.append(str(dict(response.headers)))
    texts.append(caplog.text)
    everything = "\n".join(texts)
    assert caplog.records  # something was logged
    assert key_b64 not in everything
    assert base64.b64decode(key_b64).decode() not in everything
    for signature in signatures:
        assert signature not in everything


# -- body-only mode ---------------------------------------------------------------------------


@pytest.fixture
def body_only_client(inbox: WebhookInbox) -> Any:
    app = create_webhook_app(secret=SECRET, inbox=inbox, body_only_hmac=True)
    client = AppClient(app)
    yield client


def test_body_only_signature_is_accepted(body_only_client: AppClient, inbox: WebhookInbox) -> None:
    body = encode(payload(8, notification_id="n-1"))
    response = post(body_only_client, body, {"webhook-signature": body_only_signature(body)})
    assert response.status_code == 202
    (stored,) = inbox.pending()
    assert stored.webhook_id == "n-1"
    assert stored.reservation_id == 8


def test_body_only_accepts_any_matching_entry(body_only_client: AppClient) -> None:
    body = encode(payload(8))
    header = f"v1,AAAA {body_only_signature(body, OTHER_SECRET)} {body_only_signature(body)}"
    assert post(body_only_client, body, {"webhook-signature": header}).status_code == 202


def test_body_only_rejects_forgeries(body_only_client: AppClient, inbox: WebhookInbox) -> None:
    body = encode(payload(8))
    wrong = {"webhook-signature": body_only_signature(body, OTHER_SECRET)}
    _assert_error(post(body_only_client, body, wrong), 401, "INVALID_SIGNATURE")
    altered = body.replace(b"8", b"9", 1)
    right = {"webhook-signature": body_only_signature(body)}
    _assert_error(post(body_only_client, altered, right), 401, "INVALID_SIGNATURE")
    # A Standard Webhooks signature is not a body signature.
    _assert_error(post(body_only_client, body, signed_headers(body)), 401, "INVALID_SIGNATURE")
    _assert_error(post(body_only_client, body, {}), 400, "MISSING_HEADER")
    assert inbox.counts()["total"] == 0


def test_body_only_replay_is_detected_by_the_signed_notification_id(
    body_only_client: AppClient, inbox: WebhookInbox
) -> None:
    body = encode(payload(8, notification_id="n-replayed"))
    signature = body_only_signature(body)
    assert post(body_only_client, body, {"webhook-signature": signature}).status_code == 202
    # An attacker re-sends the captured body with a fresh (unsigned) webhook-id header.
    forged_fresh = {"webhook-signature": signature, "webhook-id": "msg_brand_new"}
    response = post(body_only_client, body, forged_fresh)
    assert response.status_code == 200
    assert response.json()["status"] == "duplicate"
    assert inbox.counts()["total"] == 1


def test_body_only_stale_sent_date_is_refused(body_only_client: AppClient) -> None:
    from datetime import UTC, datetime, timedelta

    body = encode(payload(8, sent=datetime.now(UTC) - timedelta(hours=1)))
    # A fresh header timestamp does not help: it is not covered by the signature.
    headers = {
        "webhook-signature": body_only_signature(body),
        "webhook-timestamp": str(int(time.time())),
    }
    _assert_error(post(body_only_client, body, headers), 400, "STALE_TIMESTAMP")


def test_body_only_needs_the_id_and_time_inside_the_signed_body(
    body_only_client: AppClient, inbox: WebhookInbox
) -> None:
    """Unsigned headers cannot stand in for the body's notificationId and sentDate: a captured
    body re-sent with fresh headers would otherwise count as new, again and again."""
    body = encode({"type": "reservation.bill_change", "data": {"reservationId": 5}})
    signature = body_only_signature(body)
    for _ in range(3):
        headers = {
            "webhook-signature": signature,
            "webhook-id": new_id(),
            "webhook-timestamp": str(int(time.time())),
        }
        _assert_error(post(body_only_client, body, headers), 400, "MISSING_FIELD")
    no_date = encode({**payload(5), "sentDate": None})
    _assert_error(
        post(body_only_client, no_date, {"webhook-signature": body_only_signature(no_date)}),
        400,
        "MISSING_FIELD",
    )
    assert inbox.counts()["total"] == 0


def test_inbox_failure_is_503_so_the_sender_retries(tmp_path: Path) -> None:
    class BrokenInbox(WebhookInbox):
        def add(self, notification: Notification) -> bool:
            raise sqlite3.OperationalError("disk I/O error")

    client = AppClient(create_webhook_app(secret=SECRET, inbox=BrokenInbox(tmp_path)))
    body = encode(payload(1))
    _assert_error(post(client, body, signed_headers(body)), 503, "INBOX_UNAVAILABLE")


def test_a_push_with_a_lone_surrogate_is_stored_not_refused_forever(
    client: AppClient, inbox: WebhookInbox
) -> None:
    """JSON may carry "\\ud800" (a lone UTF-16 surrogate); the inbox stores it escaped instead of
    failing with 503 on every redelivery."""
    message = payload(4712)
    message["data"]["note"] = "\ud800 broken"
    body = json.dumps(message).encode()  # ASCII-escaped, as the sender's JSON encoder writes
    response = post(client, body, signed_headers(body, msg_id="msg_surrogate"))
    assert response.status_code == 202, response.text
    (stored,) = inbox.pending()
    assert stored.data["note"] == "\ud800 broken"
