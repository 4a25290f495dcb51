"""The durable inbox: replay detection, pending/processed bookkeeping, survival across reopen."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from pipelines.webhook_inbox import Notification, WebhookInbox, normalise_type


def _note(webhook_id: str, reservation_id: int, **kw: object) -> Notification:
    return Notification(
        webhook_id=webhook_id,
        received_at=datetime(2025, 5, 1, 12, 0, tzinfo=UTC),
        event_occurred=datetime(2025, 5, 1, 11, 59, 59, 500000, tzinfo=UTC),
        type="reservation.status_change",
        type_raw="reservation.status.changed",
        reservation_id=reservation_id,
        notification_id="n-" + webhook_id,
        data={"reservationId": reservation_id, "status": 21, "note": "ü"},
        **kw,  # type: ignore[arg-type]
    )


def test_add_is_idempotent_per_webhook_id(inbox: WebhookInbox) -> None:
    assert inbox.add(_note("a", 1)) is True
    assert inbox.add(_note("a", 2)) is False  # same id, whatever the content: not stored twice
    assert inbox.counts() == {"total": 1, "pending": 1, "processed": 0}
    stored = inbox.get("a")
    assert stored is not None
    assert stored.reservation_id == 1


def test_round_trip_keeps_every_field(inbox: WebhookInbox) -> None:
    original = _note("a", 7)
    inbox.add(original)
    (stored,) = inbox.pending()
    assert stored.webhook_id == "a"
    assert stored.received_at == original.received_at
    assert stored.event_occurred == original.event_occurred
    assert stored.type == "reservation.status_change"
    assert stored.type_raw == "reservation.status.changed"
    assert stored.reservation_id == 7
    assert stored.notification_id == "n-a"
    assert stored.data == {"reservationId": 7, "status": 21, "note": "ü"}
    assert stored.processed_at is None
    assert stored.seq is not None


def test_pending_order_limit_and_marking(inbox: WebhookInbox) -> None:
    for i, rid in enumerate([30, 10, 30, 20]):
        inbox.add(_note(f"id{i}", rid))
    assert [n.webhook_id for n in inbox.pending()] == ["id0", "id1", "id2", "id3"]
    assert [n.webhook_id for n in inbox.pending(limit=2)] == ["id0", "id1"]
    assert inbox.reservation_ids_pending() == [10, 20, 30]

    # A refresh of reservation 30 landed for the snapshot {id0}; id2 arrived later and stays.
    assert inbox.mark_processed(["id0", "unknown"]) == 1
    assert inbox.mark_processed(["id0"]) == 0  # repeatable after a crash
    assert inbox.reservation_ids_pending() == [10, 20, 30]
    assert inbox.mark_processed(["id1", "id2", "id3"]) == 3
    assert inbox.reservation_ids_pending() == []
    assert inbox.pending() == []
    assert inbox.counts() == {"total": 4, "pending": 0, "processed": 4}
    assert inbox.get("id0").processed_at is not None  # type: ignore[union-attr]
    # A processed id still counts as seen: a late replay is not stored again.
    assert inbox.add(_note("id0", 30)) is False


def test_mark_processed_many_ids(inbox: WebhookInbox) -> None:
    ids = [f"bulk{i}" for i in range(700)]
    for i, webhook_id in enumerate(ids):
        inbox.add(_note(webhook_id, i + 1))
    assert inbox.mark_processed(iter(ids)) == 700
    assert inbox.counts()["pending"] == 0


def test_survives_reopen_and_uses_wal(tmp_path: Path) -> None:
    first = WebhookInbox(tmp_path)
    first.add(_note("keep", 5))
    again = WebhookInbox(tmp_path)
    assert again.path == tmp_path / "inbox" / "webhooks.sqlite3"
    assert [n.webhook_id for n in again.pending()] == ["keep"]
    assert again.add(_note("keep", 5)) is False
    with sqlite3.connect(again.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_naive_datetimes_are_refused(inbox: WebhookInbox) -> None:
    naive = Notification(
        webhook_id="x",
        received_at=datetime(2025, 1, 1),
        event_occurred=None,
        type="reservation.bill_change",
        reservation_id=1,
    )
    with pytest.raises(ValueError, match="timezone-aware"):
        inbox.add(naive)


def test_timezones_are_normalised_to_utc(inbox: WebhookInbox) -> None:
    plus_two = datetime(2025, 5, 1, 14, 0, tzinfo=UTC).astimezone(timezone(timedelta(hours=2)))
    inbox.add(
        Notification(
            webhook_id="tz",
            received_at=plus_two,
            event_occurred=None,
            type="reservation.refund_given",
            reservation_id=9,
        )
    )
    stored = inbox.get("tz")
    assert stored is not None
    assert stored.received_at == datetime(2025, 5, 1, 14, 0, tzinfo=UTC)
    assert stored.received_at.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("reservation.status_change", "reservation.status_change"),
        ("reservation.status.changed", "reservation.status_change"),
        ("reservation.stay_period_change", "reservation.stay_period_change"),
        ("reservation.bill_change", "reservation.bill_change"),
        ("reservation.payment_received", "reservation.payment_received"),
        ("reservation.refund_given", "reservation.refund_given"),
        ("reservation.created", None),
        ("RESERVATION.STATUS_CHANGE", None),
    ],
)
def test_normalise_type(raw: str, expected: str | None) -> None:
    assert normalise_type(raw) == expected
