"""Webhooks: Standard Webhooks signatures a receiver can verify, and retries on failure."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from sandbox.webhooks import WebhookSender
from sandbox.world import World

SECRET = "whsec_" + base64.b64encode(b"reservoir-sandbox-test-secret-32b").decode()


class Receiver:
    """A loopback HTTP receiver that records requests and fails the first `fail_first` ones."""

    def __init__(self, fail_first: int = 0) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.fail_first = fail_first
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                with outer.lock:
                    outer.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    fail = len(outer.requests) <= outer.fail_first
                self.send_response(503 if fail else 204)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    rc = Receiver(fail_first=2)
    yield rc
    rc.close()


def test_reservation_changes_are_pushed_and_verifiable(receiver: Receiver) -> None:
    w = World(seed=7)
    try:
        w.configure_webhooks(receiver.url, SECRET, base_delay=0.01, max_attempts=5)
        recs = w.availability(
            arrival_from=date(2027, 2, 1),
            arrival_to=date(2027, 2, 1),
            durations=[7],
            distribution_channel_code="WEB-EUR",
        )
        rt = next(r["resourceId"] for r in recs if r["availableUnits"] > 0)
        rid = w.create_reservation(
            {
                "accommodationTypes": [
                    {
                        "resourceId": rt,
                        "duration": 4,
                        "subjects": {"persons": [{"age": 30, "quantity": 2}]},
                    }
                ],
                "categoryCode": "GUEST",
                "distributionChannelCode": "WEB-EUR",
                "customer": {"firstName": "Web", "lastName": "Hook"},
                "arrivalDate": "2027-02-01",
            }
        )["reservationId"]
        w.pay(rid, 50)
        w.change_stay(rid, "2027-02-08")
        w.pay(rid)  # everything: cancelled 92 days out, all above the 15 % kept is refunded
        w.update_reservation(rid, {"action": "CANCEL"})
        w.advance(12)
        assert w.webhooks.flush(30)
    finally:
        w.close()
    hook = Webhook(SECRET)
    bodies = []
    ids = []
    for headers, body in receiver.requests:
        assert headers["webhook-signature"].startswith("v1,")
        bodies.append(hook.verify(body, headers))
        ids.append(headers["webhook-id"])
    # the two failed first attempts were retried with the same webhook-id
    assert ids[0] == ids[1] == ids[2]
    mine = [b for b in bodies if b["data"]["reservationId"] == rid]
    types = {b["type"] for b in mine}
    assert {
        "reservation.status_change",
        "reservation.payment_received",
        "reservation.stay_period_change",
        "reservation.bill_change",
        "reservation.refund_given",
    } <= types
    for b in mine:
        assert set(b) == {
            "notificationId",
            "webhookId",
            "webhookName",
            "eventOccurred",
            "sentDate",
            "type",
            "data",
        }
    status = [b["data"] for b in mine if b["type"] == "reservation.status_change"]
    assert status[0]["previousStatus"] is None and status[-1]["status"] == -12
    stay = next(b["data"] for b in mine if b["type"] == "reservation.stay_period_change")
    assert stay["previousDepartureDate"] == "2027-02-05" and stay["departureDate"] == "2027-02-08"
    pay = next(b["data"] for b in mine if b["type"] == "reservation.payment_received")
    assert pay["amount"] == 50.0 and pay["currencyCode"] == "EUR"
    refund = next(b["data"] for b in mine if b["type"] == "reservation.refund_given")
    assert refund["amount"] > 0
    # tampering breaks the signature
    headers, body = receiver.requests[-1]
    with pytest.raises(WebhookVerificationError):
        hook.verify(body.replace(b"reservation", b"reservatioN"), headers)


def test_sender_gives_up_after_bounded_attempts() -> None:
    rc = Receiver(fail_first=100)
    sender = WebhookSender(rc.url, SECRET, max_attempts=3, base_delay=0.01)
    try:
        from datetime import datetime

        sender.send(
            "reservation.status_change",
            {"reservationId": 1},
            datetime(2026, 11, 1),
            datetime(2026, 11, 1),
        )
        assert sender.flush(20)
        assert len(rc.requests) == 3 and sender.failed and not sender.delivered
        assert sender.attempts[sender.failed[0][0]] == 3
    finally:
        sender.close()
        rc.close()
