"""Property: whatever arrives, the receiver answers 2xx or 4xx, never 5xx, and stays consistent."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pipelines.webhook_inbox import WebhookInbox
from pipelines.webhooks import WEBHOOK_PATH, create_webhook_app

from .conftest import SECRET, AppClient, body_only_signature, new_id, signed_headers

_HEADER_NAMES = [
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "content-length",
    "content-type",
    "x-other",
]
# Header values as they can arrive on the wire: latin-1 text without line breaks.
_header_value = (
    st.binary(max_size=80)
    .map(lambda raw: raw.replace(b"\r", b"").replace(b"\n", b"").replace(b"\x00", b""))
    .map(lambda raw: raw.strip(b" \t"))
)

_json_leaf = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
)
_json = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
_types = st.sampled_from(
    ["reservation.status_change", "reservation.status.changed", "reservation.refund_given", "x"]
)
_times = st.sampled_from(["2025-01-01T00:00:00.000", "2025-01-01T00:00:00+02:00", "2025-13-01"])
# Mostly well-formed documents with arbitrary values mixed in, so that every field check (and
# acceptance itself) is reached, not only the first rejection.
_document = st.fixed_dictionaries(
    {
        "type": _types | _json,
        "data": st.fixed_dictionaries(
            {
                "reservationId": st.integers(min_value=1, max_value=2**63 - 1)
                | st.integers()
                | _json
            },
            optional={"status": _json, "extra": _json},
        )
        | _json,
    },
    optional={
        "eventOccurred": _times | _json,
        "notificationId": st.text(min_size=1, max_size=12) | _json,
        "webhookName": _json,
    },
)


@dataclass
class _Apps:
    inbox: WebhookInbox
    clients: dict[bool, AppClient]


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> _Apps:
    """One inbox for all examples (module scope: hypothesis re-runs the body, not the fixture)."""
    inbox = WebhookInbox(tmp_path_factory.mktemp("webhook-properties"))
    clients = {
        mode: AppClient(
            create_webhook_app(secret=SECRET, inbox=inbox, max_body_bytes=4096, body_only_hmac=mode)
        )
        for mode in (False, True)
    }
    return _Apps(inbox, clients)


def _check(response: Any) -> None:
    assert 200 <= response.status_code < 500, response.text
    assert isinstance(json.loads(response.text), dict)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.binary(max_size=5000),
    headers=st.lists(st.tuples(st.sampled_from(_HEADER_NAMES), _header_value), max_size=6),
    body_only=st.booleans(),
)
def test_arbitrary_requests_never_cause_a_server_error(
    apps: _Apps, body: bytes, headers: list[tuple[str, bytes]], body_only: bool
) -> None:
    # content-length must describe the body for the transport; keep only an honest one.
    headers = [(k, v) for k, v in headers if k != "content-length"]
    _check(apps.clients[body_only].post(WEBHOOK_PATH, content=body, headers=headers))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    document=_document,
    skew=st.sampled_from([0, 0, 0, -10, 10, -100_000, 100_000]),
    body_only=st.booleans(),
)
def test_correctly_signed_arbitrary_documents_never_cause_a_server_error(
    apps: _Apps, document: dict[str, Any], skew: int, body_only: bool
) -> None:
    """Signed bodies get past the signature check, so every field check is exercised."""
    body = json.dumps(document).encode()
    if body_only:
        # Headers are not signed in this mode: without notificationId and sentDate in the
        # body the push is refused (400), never a server error.
        headers = {
            "webhook-signature": body_only_signature(body),
            "webhook-timestamp": str(int(time.time()) + skew),
            "webhook-id": new_id(),
        }
    else:
        headers = signed_headers(body, timestamp=int(time.time()) + skew)
    response = apps.clients[body_only].post(WEBHOOK_PATH, content=body, headers=headers)
    _check(response)
    event(f"status {response.status_code} {response.json().get('code', '')}")
    if response.status_code in (200, 202):
        stored = apps.inbox.get(response.json()["webhookId"])
        assert stored is not None
        assert stored.reservation_id == document["data"]["reservationId"]
