"""The lake's run state: the event cursor, the sweep mark, the tables whose warehouse models are
pending, the as-of date (the service's date at the last run), when each finance table was last
read, and batch ids that sort after everything recorded.

Each state is a folder `lake/_state/<name>/` of one-row Parquet files named by batch id; the
newest file wins (`Lake.read_state`), and compaction keeps the newest `state_history` of each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from lake.parts import new_batch_id
from lake.store import Lake

CURSOR_STATE = "event_cursor"
SWEEP_STATE = "sweep_mark"
PENDING_STATE = "warehouse_pending"
SOURCE_STATE = "source"
AS_OF_STATE = "as_of"
FINANCE_STATE = "finance_reads"


class SourceMismatch(RuntimeError):
    """The lake was built from another service (or sandbox world) than this run's."""


def check_source(lake: Lake, source: str, batch_id: str) -> None:
    """One source per data directory: the first run records it, later runs must match it.

    Mixing two sources in one lake (another service, another concern, another sandbox world)
    would run "incremental" and join one world's units with the other's reservations.
    """
    row = lake.read_state(SOURCE_STATE)
    if row is None:
        lake.write_state(SOURCE_STATE, batch_id, {"source": source, "batch_id": batch_id})
        return
    if row.get("source") != source:
        raise SourceMismatch(
            f"this data directory ({lake.root.parent}) holds data from {row.get('source')}, "
            f"not from {source}; nothing was written. Point RESERVOIR_DATA_DIR at another "
            "directory for this source, or delete this one to start it afresh"
        )


@dataclass(frozen=True)
class Cursor:
    """Where the feed was read up to (an eventId and an eventDate high-water mark), which events
    of the overlap window are applied, and the business date of that run.

    `applied_ids`: the ids (all <= `event_id`) of the events applied whose eventDate lies within
    the overlap window before `event_date`; the next run's window read skips exactly these.
    None means unknown (the bootstrap, rows written before the window existed, or a run that did
    not read a window): the next window is then applied in full, which is harmless (refetching
    is idempotent and a merge row lands only once per eventId, see `_drop_landed_merges`).
    """

    event_id: int
    event_date: str | None = None  # newest eventDate applied (the service's text): the mark
    business_date: date | None = None
    batch_id: str | None = None
    applied_ids: tuple[int, ...] | None = None

    def as_row(self) -> dict[str, Any]:
        return {
            "event_id": int(self.event_id),
            "event_date": self.event_date,
            "business_date": self.business_date.isoformat() if self.business_date else None,
            "batch_id": self.batch_id,
            "written_at": datetime.now(UTC).isoformat(),
            # a list<int64> column (null when unknown); an empty list reads back as []
            "applied_event_ids": None if self.applied_ids is None else list(self.applied_ids),
        }


def read_cursor(lake: Lake) -> Cursor | None:
    """The newest cursor row; rows written before `applied_event_ids` existed read as unknown."""
    row = lake.read_state(CURSOR_STATE)
    if not row or row.get("event_id") is None:
        return None
    bd = row.get("business_date")
    applied = row.get("applied_event_ids")
    return Cursor(
        event_id=int(row["event_id"]),
        event_date=row.get("event_date"),
        business_date=date.fromisoformat(bd) if bd else None,
        batch_id=row.get("batch_id"),
        applied_ids=None if applied is None else tuple(sorted({int(i) for i in applied})),
    )


def write_cursor(lake: Lake, batch_id: str, cursor: Cursor) -> Path:
    """Append a cursor row; call only after the run's tables have committed."""
    return lake.write_state(CURSOR_STATE, batch_id, cursor.as_row())


def _state_batch_ids(lake: Lake) -> list[str]:
    root = lake.root / "_state"
    if not root.is_dir():
        return []
    return sorted(p.stem for p in root.glob("*/*.parquet"))


def next_batch_id(lake: Lake, at: datetime | None = None) -> str:
    """A new batch id that sorts after every batch this module has recorded.

    Batch ids sort by second; two runs in the same second would otherwise order by their random
    token, and an older run's rows could win over a newer run's.
    """
    at = at or datetime.now(UTC)
    candidate = new_batch_id(at)
    known = _state_batch_ids(lake)
    if known and candidate <= known[-1]:
        newest = datetime.strptime(known[-1][:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        candidate = new_batch_id(newest + timedelta(seconds=1))
    return candidate


def fresh_batch_id(lake: Lake, proposed: str | None) -> str:
    """`proposed` (e.g. a Dagster run's batch id) unless it would sort before recorded state.

    Re-executing an old failed run reuses its old batch id; rows landed under it would lose to
    newer batches although they are fresher, and its cursor row would not be the newest.
    """
    known = _state_batch_ids(lake)
    if proposed and (not known or proposed > known[-1]):
        return proposed
    return next_batch_id(lake)


def pending_tables(lake: Lake) -> set[str]:
    row = lake.read_state(PENDING_STATE) or {}
    text = row.get("tables") or ""
    return {t for t in text.split(",") if t}


def mark_warehouse_pending(lake: Lake, batch_id: str, tables: Iterable[str]) -> set[str]:
    """Remember tables whose models must be rebuilt, so a failed build is retried next time."""
    tables = set(tables)
    if not tables:
        return pending_tables(lake)
    merged = pending_tables(lake) | tables
    lake.write_state(
        PENDING_STATE, batch_id, {"tables": ",".join(sorted(merged)), "batch_id": batch_id}
    )
    return merged


@dataclass(frozen=True)
class AsOf:
    """The business date of a run: the service's date (never this machine's), or an override.

    `service_time`: the service's time it was read from (UTC; None for an override);
    `source`: where it came from (the service's `Date` header, its newest event, an override).
    """

    business_date: date
    service_time: datetime | None = None
    source: str = "override"

    def as_row(self, batch_id: str) -> dict[str, Any]:
        return {
            "business_date": self.business_date.isoformat(),
            "service_time": self.service_time.isoformat() if self.service_time else None,
            "source": self.source,
            "batch_id": batch_id,
        }

    def describe(self) -> str:
        """`2026-11-04 (the service's Date header at 2026-11-04 10:00 UTC)`."""
        when = f" at {self.service_time:%Y-%m-%d %H:%M} UTC" if self.service_time else ""
        return f"{self.business_date.isoformat()} ({self.source}{when})"


def write_as_of(lake: Lake, batch_id: str, as_of: AsOf) -> Path:
    """Record the business date a run read the service at (the warehouse's default as-of)."""
    return lake.write_state(AS_OF_STATE, batch_id, as_of.as_row(batch_id))


def read_as_of(lake: Lake) -> AsOf | None:
    """The business date of the newest run that recorded one; None before the first."""
    row = lake.read_state(AS_OF_STATE)
    if not row or not row.get("business_date"):
        return None
    when = row.get("service_time")
    return AsOf(
        business_date=date.fromisoformat(row["business_date"]),
        service_time=datetime.fromisoformat(when) if when else None,
        source=row.get("source") or "override",
    )


def finance_reads(lake: Lake) -> dict[str, date]:
    """Per finance table, the business date of its last successful read (absent: never)."""
    row = lake.read_state(FINANCE_STATE) or {}
    return {
        k: date.fromisoformat(v)
        for k, v in row.items()
        if k not in ("batch_id", "written_at") and isinstance(v, str) and v
    }


def mark_finance_read(lake: Lake, batch_id: str, tables: Iterable[str], day: date) -> Path:
    """After these tables' landing committed (or found nothing to land): read up to `day`."""
    row: dict[str, Any] = {k: v.isoformat() for k, v in finance_reads(lake).items()}
    row.update({t: day.isoformat() for t in tables})
    row.update(batch_id=batch_id, written_at=datetime.now(UTC).isoformat())
    return lake.write_state(FINANCE_STATE, batch_id, row)


REFUSED_STATE = "refused_areas"  # streams of optional areas refused and not read since


def refused_streams(lake: Lake) -> list[dict[str, Any]]:
    """The streams of optional areas the service refused and no run has read in full since
    (`assets.refusal` writes them): one dict per stream (stream, area, status, endpoint, said,
    tables, since, what_to_do)."""
    row = lake.read_state(REFUSED_STATE) or {}
    return list(orjson.loads(row.get("streams") or "[]"))


def write_refused_streams(lake: Lake, batch_id: str, streams: list[dict[str, Any]]) -> None:
    lake.write_state(REFUSED_STATE, batch_id, {"streams": orjson.dumps(streams).decode()})
