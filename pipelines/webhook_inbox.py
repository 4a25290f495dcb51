"""Durable inbox for accepted webhook notifications.

The webhook receiver answers 2xx only after a notification is committed here, so a push the sender
saw acknowledged survives a crash or restart of the receiver. A sensor reads the pending
reservation ids, starts refresh runs, and marks the notifications processed once the refresh has
landed in the lake.

Why SQLite (stdlib ``sqlite3``) and not a Parquet file under ``lake/_state``: the receiver must
commit one small row per push, durably, before answering, and detect replays across restarts. A
``UNIQUE`` constraint on the idempotency key does the replay check atomically (no read-then-write
race between concurrent pushes), WAL mode lets the sensor read while the receiver writes, and
``synchronous=FULL`` makes each commit survive power loss, not only a process crash.

Every method opens and closes its own connection: the inbox object holds no connection, so it is
safe to share between threads (the receiver's thread pool) and to pass to other processes (a
sensor in the Dagster daemon) without coordination beyond SQLite's own locking.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "DOTTED_TYPE_ALIASES",
    "INBOX_DIR_NAME",
    "INBOX_FILE_NAME",
    "KNOWN_TYPES",
    "Notification",
    "WebhookInbox",
    "normalise_type",
]

INBOX_DIR_NAME = "inbox"
INBOX_FILE_NAME = "webhooks.sqlite3"

#: The reservation event types the interface lists.
KNOWN_TYPES: frozenset[str] = frozenset(
    {
        "reservation.status_change",
        "reservation.stay_period_change",
        "reservation.bill_change",
        "reservation.payment_received",
        "reservation.refund_given",
    }
)

#: Spellings seen in the interface's sample request that mean one of the known types.
DOTTED_TYPE_ALIASES: Mapping[str, str] = {
    "reservation.status.changed": "reservation.status_change",
}

_SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id      TEXT    NOT NULL UNIQUE,
    received_at     TEXT    NOT NULL,
    event_occurred  TEXT,
    type            TEXT    NOT NULL,
    type_raw        TEXT    NOT NULL,
    reservation_id  INTEGER NOT NULL,
    notification_id TEXT,
    data            TEXT    NOT NULL,
    processed_at    TEXT
);
CREATE INDEX IF NOT EXISTS notifications_pending ON notifications (processed_at, seq);
"""

_COLUMNS = (
    "seq, webhook_id, received_at, event_occurred, type, type_raw, reservation_id, "
    "notification_id, data, processed_at"
)


def normalise_type(raw: str) -> str | None:
    """Map a pushed ``type`` to one of :data:`KNOWN_TYPES`, or ``None`` when it is unknown.

    The interface lists ``reservation.status_change`` but its sample shows
    ``reservation.status.changed``; both mean the same event, so the inbox stores one spelling and
    the sensor never has to know about the variant.
    """
    if raw in KNOWN_TYPES:
        return raw
    return DOTTED_TYPE_ALIASES.get(raw)


def _iso(moment: datetime) -> str:
    """UTC ISO 8601 with microseconds, so stored timestamps sort as text."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _parse_iso(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


@dataclass(frozen=True, slots=True)
class Notification:
    """One accepted push, as the receiver stores it.

    ``webhook_id`` is the delivery's idempotency key (the ``webhook-id`` header in the Standard
    Webhooks mode); ``type`` is normalised (see :func:`normalise_type`) and ``type_raw`` keeps the
    spelling that was pushed; ``data`` is the body's ``data`` object as received. The secret and
    the signature are never stored.
    """

    webhook_id: str
    received_at: datetime
    event_occurred: datetime | None
    type: str
    reservation_id: int
    data: dict[str, Any] = field(default_factory=dict)
    type_raw: str | None = None
    notification_id: str | None = None
    processed_at: datetime | None = None
    seq: int | None = None


def _row_to_notification(row: sqlite3.Row) -> Notification:
    return Notification(
        seq=row["seq"],
        webhook_id=row["webhook_id"],
        received_at=datetime.fromisoformat(row["received_at"]),
        event_occurred=_parse_iso(row["event_occurred"]),
        type=row["type"],
        type_raw=row["type_raw"],
        reservation_id=row["reservation_id"],
        notification_id=row["notification_id"],
        data=json.loads(row["data"]),
        processed_at=_parse_iso(row["processed_at"]),
    )


class WebhookInbox:
    """Durable store of accepted notifications under ``<data_dir>/inbox/``.

    Typical use by a sensor, free of the race where a push arrives while its refresh is running::

        batch = inbox.pending(limit=500)          # snapshot
        ids = sorted({n.reservation_id for n in batch})
        ... start a refresh of ``ids``; when it has landed:
        inbox.mark_processed(n.webhook_id for n in batch)

    Marking by webhook id (not by reservation id) means a push that arrives after the snapshot stays
    pending and triggers another refresh, even when it concerns a reservation being refreshed.
    """

    def __init__(self, data_dir: Path | str, *, busy_timeout_seconds: float = 30.0) -> None:
        self.directory = Path(data_dir) / INBOX_DIR_NAME
        self.path = self.directory / INBOX_FILE_NAME
        self._busy_timeout_seconds = busy_timeout_seconds
        self._initialise()

    def __repr__(self) -> str:
        return f"WebhookInbox({str(self.path)!r})"

    # -- connection handling -------------------------------------------------------------------

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A fresh autocommit connection with the durability settings; always closed."""
        conn = sqlite3.connect(
            self.path,
            timeout=self._busy_timeout_seconds,
            isolation_level=None,  # autocommit: each statement commits, or explicit BEGIN
            check_same_thread=False,
        )
        try:
            conn.row_factory = sqlite3.Row
            # FULL: the WAL is fsynced on every commit, so an acknowledged push survives power loss.
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            yield conn
        finally:
            conn.close()

    def _initialise(self) -> None:
        created = not self.path.exists()
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            # WAL is a property of the database file; setting it once persists it.
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # pragma: no cover - only on filesystems without WAL
                raise RuntimeError(f"inbox database {self.path} cannot use WAL mode (got {mode})")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise RuntimeError(
                    f"inbox database {self.path} has schema version {version}, newer than this "
                    f"code understands ({_SCHEMA_VERSION})"
                )
            conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        if created:
            _fsync_directory(self.directory)

    # -- writes --------------------------------------------------------------------------------

    def add(self, notification: Notification) -> bool:
        """Store ``notification``; ``False`` when its webhook id was already stored.

        The insert is one autocommitted statement, so when this returns the row is on disk and the
        receiver may acknowledge. ``ON CONFLICT DO NOTHING`` makes concurrent deliveries of the same
        id race-free: exactly one of them returns ``True``.
        """
        received_at = notification.received_at
        if received_at.tzinfo is None:
            raise ValueError("received_at must be timezone-aware")
        event_occurred = notification.event_occurred
        if event_occurred is not None and event_occurred.tzinfo is None:
            raise ValueError("event_occurred must be timezone-aware")
        with self._connect() as conn:
            cursor = conn.execute(
                "INSERT INTO notifications (webhook_id, received_at, event_occurred, type, "
                "type_raw, reservation_id, notification_id, data, processed_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (webhook_id) DO NOTHING",
                (
                    notification.webhook_id,
                    _iso(received_at),
                    None if event_occurred is None else _iso(event_occurred),
                    notification.type,
                    notification.type_raw
                    if notification.type_raw is not None
                    else notification.type,
                    int(notification.reservation_id),
                    notification.notification_id,
                    # ASCII: a lone surrogate (valid in JSON, not in UTF-8) is stored escaped.
                    json.dumps(notification.data, ensure_ascii=True, separators=(",", ":")),
                    None if notification.processed_at is None else _iso(notification.processed_at),
                ),
            )
            return cursor.rowcount == 1

    def mark_processed(self, webhook_ids: Iterable[str], *, at: datetime | None = None) -> int:
        """Mark the given notifications processed; returns how many were pending before.

        Already processed or unknown ids are ignored, so a sensor may call this again after a
        crash between the refresh landing and the mark.
        """
        ids = list(dict.fromkeys(webhook_ids))
        if not ids:
            return 0
        stamp = _iso(at or datetime.now(UTC))
        changed = 0
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    cursor = conn.execute(
                        f"UPDATE notifications SET processed_at = ? "
                        f"WHERE processed_at IS NULL AND webhook_id IN ({marks})",
                        (stamp, *chunk),
                    )
                    changed += cursor.rowcount
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return changed

    # -- reads ---------------------------------------------------------------------------------

    def pending(self, limit: int | None = None) -> list[Notification]:
        """Unprocessed notifications, oldest first (by arrival order)."""
        sql = f"SELECT {_COLUMNS} FROM notifications WHERE processed_at IS NULL ORDER BY seq"
        params: tuple[int, ...] = ()
        if limit is not None:
            if limit < 0:
                raise ValueError("limit must be >= 0")
            sql += " LIMIT ?"
            params = (limit,)
        with self._connect() as conn:
            return [_row_to_notification(row) for row in conn.execute(sql, params)]

    def reservation_ids_pending(self) -> list[int]:
        """Distinct reservation ids with at least one unprocessed notification, ascending."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT DISTINCT reservation_id FROM notifications "
                "WHERE processed_at IS NULL ORDER BY reservation_id"
            ).fetchall()
        return [int(row[0]) for row in rows]

    def get(self, webhook_id: str) -> Notification | None:
        """The stored notification with this webhook id, if any."""
        with self._connect() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM notifications WHERE webhook_id = ?", (webhook_id,)
            ).fetchone()
        return None if row is None else _row_to_notification(row)

    def counts(self) -> dict[str, int]:
        """``{"total", "pending", "processed"}`` counts, for health checks and logs."""
        with self._connect() as conn:
            total, pending = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE processed_at IS NULL) FROM notifications"
            ).fetchone()
        return {"total": int(total), "pending": int(pending), "processed": int(total - pending)}


def _fsync_directory(directory: Path) -> None:
    """Persist the directory entry of a newly created database file (POSIX only)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. platforms that cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
