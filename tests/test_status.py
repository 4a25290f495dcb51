"""`reservoir status` shows the webhook inbox (pending pushes were invisible) without creating
one where there is none."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from pipelines.settings import Settings
from pipelines.status import print_status
from pipelines.webhook_inbox import INBOX_DIR_NAME, Notification, WebhookInbox


def _status(data_dir: Path) -> str:
    out = io.StringIO()
    print_status(Settings(data_dir=data_dir), Console(file=out, width=200))
    return out.getvalue()


def test_status_shows_pending_webhook_pushes(tmp_path: Path) -> None:
    assert "webhook inbox: none" in _status(tmp_path)
    assert not (tmp_path / INBOX_DIR_NAME).exists()  # looking did not create it

    inbox = WebhookInbox(tmp_path)
    for i in range(5):
        inbox.add(
            Notification(
                webhook_id=f"msg_{i}",
                received_at=datetime(2026, 11, 24, 9, i, tzinfo=UTC),
                event_occurred=None,
                type="reservation.status_change",
                reservation_id=100 + i,
            )
        )
    inbox.mark_processed(["msg_0"])
    text = _status(tmp_path)
    assert "webhook inbox: 4 pending, 1 processed" in text
    assert "oldest pending received 2026-11-24 09:01 UTC" in text
