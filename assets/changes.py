"""Incremental extraction: the event feed -> a refresh plan -> delta batches -> the event cursor.

Why this shape:

* Events are hints, not data (interface "Events"; real-service-notes section 7): an event says
  *which* entity changed, so the plan only collects ids per event type, and the entities are
  refetched with id-list filters. Many events about one reservation cost one id in one request.
* The plan is a pure function of the events (`plan_changes`), so its rules are unit-tested
  without HTTP: the last action per entity wins, DELETE becomes a tombstone, a customer MERGE is
  a `customer_merges` row plus a tombstone for the removed customer plus a refresh of the
  survivor, and unknown event types are counted, never fatal.
* Landing uses the assets' own `Normaliser` and lake writers (same columns, same quarantine rule)
  into one delta batch per run; children are committed before their parents, so a reader never
  sees a refetched reservation with its old bill.
* The cursor (`lake/_state/event_cursor/<batch_id>.parquet`, newest wins) is written only after
  every table of the run has committed. A crash anywhere before that leaves the cursor where it
  was, and the rerun replays the same events (refetching is idempotent: the newest batch wins).
* Some changes produce no events: the interface says nothing is logged when a record becomes
  inactive because a date passed, and the finance tables have no event type at all. So each run
  also re-reads what is small and time-driven: recent journal reports and their entries, cash
  clearances since the last business date and, when the business date has moved, the availability
  horizon and the small reference lists (these are compared with the lake and only land when
  they differ).
* A writer lock (`lake/_state/writer.lock`, `flock`) makes sure two runs (event feed, webhook
  refresh, sweep) never interleave their batches.

Everything here is free of Dagster; `pipelines/lake_assets.py` runs it in every mode.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from assets import reconcile
from assets.extract import ExtractReport, ExtractSettings, QuarantineRateExceeded, run_spec
from assets.normalise import Normaliser
from assets.pages import service_requests
from assets.specs import SPECS, EndpointSpec
from lake.locks import DEFAULT_LOCK_TIMEOUT, writer_lock
from lake.parts import DEFAULT_FLUSH_ROWS, PartWriter
from lake.schema import Table
from lake.state import (
    SWEEP_STATE,
    Cursor,
    fresh_batch_id,
    mark_warehouse_pending,
    next_batch_id,
    read_cursor,
    write_cursor,
)
from lake.store import Lake
from lake.tables import TABLES
from service.errors import BadRequest

log = logging.getLogger("assets.changes")

EVENTS_SOURCE = "/events"
DEFAULT_MAX_EVENTS = 200_000  # one run reads at most this many events; the next run continues
DEFAULT_SWEEP_OVERLAP = timedelta(hours=1)  # datetimes have ms precision; ordering is unproven
# Each incremental run re-reads the events of this span (by eventDate) before its cursor: an
# event may become visible after events with higher ids (it committed late). Must exceed the
# longest such delay; 0 turns the window off (the cursor then follows eventId alone).
DEFAULT_EVENT_OVERLAP = timedelta(minutes=5)
AVAILABILITY_FULL_SHARE = 0.25  # refetch the whole horizon once this share of types changed

Record = dict[str, Any]
Pages = AsyncIterator[list[Record]]
OpenClient = Callable[[], AbstractAsyncContextManager[Any]]
SPEC_BY_NAME: dict[str, EndpointSpec] = {s.name: s for s in SPECS}


# ------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Target:
    """What an event type refreshes: the endpoint spec, and how to ask for a list of ids."""

    name: str
    spec: str  # endpoint spec in `assets.specs.SPECS`
    path: str  # list path that accepts the id-list filter
    id_field: str  # wire field of the id list
    keyed: bool  # entityId is the root table's key: DELETE -> tombstone
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tables(self) -> tuple[str, ...]:
        return tuple(t.name for t in SPEC_BY_NAME[self.spec].tables)


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("reservations", "reservations", "/reservations/details", "reservationId", True),
        Target("customers", "customers", "/customers", "customerId", True),
        Target("units", "units", "/units", "unitId", True),
        Target("locations", "locations", "/locations", "locationId", True),
        Target(
            "distribution_channels",
            "distribution_channels",
            "/distributionchannels",
            "distributionChannelId",
            True,
        ),
        Target(
            "accommodation_types",
            "accommodation_types",
            "/accommodationtypes/details",
            "resourceId",
            True,
            {"returnSections": "CAPACITIES"},
        ),
        Target("rates", "rates", "/accommodationtypes/{resourceId}/rates", "resourceId", False),
        Target(
            "availability", "availability", "/accommodationtypes/availability", "resourceId", False
        ),
    )
}

# Event type -> target. Types the interface lists but the lake does not model are counted.
EVENT_TARGETS: dict[str, str] = {
    "RESERVATION_EVENT": "reservations",
    "CUSTOMER_EVENT": "customers",
    "UNIT_EVENT": "units",
    "RESORT_EVENT": "locations",
    "DISTRIBUTIONCHANNEL_EVENT": "distribution_channels",
    "ACCOMMODATION_TYPE_EVENT": "accommodation_types",
    "RATE_EVENT": "rates",
    "AVAILABILITY_EVENT": "availability",
}
NOT_MODELLED: frozenset[str] = frozenset(
    {
        "ALLOTMENT_EVENT",
        "ADDITION_EVENT",
        "ADDON_EVENT",
        "IMPLY_EVENT",
        "OFFER_EVENT",
        "OWNER_EVENT",
        "RENTABILITY_EVENT",
        "RESERVABILITY_EVENT",
    }
)
# RATE and AVAILABILITY events may concern offers (entityType); only accommodation types land.
_TYPE_SCOPED = {"rates", "availability"}
_ACCOMMODATION_ENTITY_TYPES = {None, "", "ACCOMMODATIONTYPE", "ACCOMMODATION_TYPE"}

# Lists re-read in full (and compared) when the business date moves and by the nightly sweep.
REFERENCE_LISTS: tuple[str, ...] = (
    "distribution_channels",
    "locations",
    "accommodation_types",
    "units",
    "rate_types",
    "rate_options",
    "companies",
    "cash_accounts",
)


@dataclass
class ChangePlan:
    """What a run of events asks for. Built by `plan_changes`; sets collapse duplicates."""

    refresh: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    delete: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    merges: list[Record] = field(default_factory=list)  # MERGE events = customer_merges rows
    not_modelled: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)
    events: int = 0
    first_event_id: int | None = None
    last_event_id: int | None = None
    last_event_date: str | None = None

    @property
    def empty(self) -> bool:
        return not (any(self.refresh.values()) or any(self.delete.values()) or self.merges)

    def tables(self) -> set[str]:
        """Lake tables this plan writes (before the time-driven parts of a run)."""
        out: set[str] = set()
        for name in {k for k, v in self.refresh.items() if v} | {
            k for k, v in self.delete.items() if v
        }:
            out.update(TARGETS[name].tables)
        if self.merges:
            out.add("customer_merges")
        return out

    def summary(self) -> dict[str, Any]:
        """Plain data for logs and Dagster metadata."""
        return {
            "events": self.events,
            "first_event_id": self.first_event_id,
            "last_event_id": self.last_event_id,
            "refresh": {k: len(v) for k, v in sorted(self.refresh.items()) if v},
            "delete": {k: len(v) for k, v in sorted(self.delete.items()) if v},
            "merges": len(self.merges),
            "not_modelled": dict(self.not_modelled),
            "unknown": dict(self.unknown),
        }


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def plan_changes(events: Iterable[Record]) -> ChangePlan:
    """Group events into ids to refetch or tombstone; pure, so its rules are testable.

    Events are taken in eventId order; for entities keyed by the event's id the *last* action
    decides (a DELETE after an UPDATE tombstones, an UPDATE after a DELETE refetches). A MERGE
    removes `oldEntityId` (tombstone) and changes `entityId` (refetch), and lands the event as a
    `customer_merges` row. Events about types the lake does not model, offers, or unknown types
    are counted and skipped, never fatal.
    """
    plan = ChangePlan()
    last: dict[tuple[str, int], str] = {}
    ordered = sorted(events, key=lambda e: _int(e.get("eventId")) or 0)
    for event in ordered:
        plan.events += 1
        event_id = _int(event.get("eventId"))
        if event_id is not None:
            if plan.first_event_id is None:
                plan.first_event_id = event_id
            plan.last_event_id = event_id
            plan.last_event_date = event.get("eventDate") or plan.last_event_date
        event_type = str(event.get("eventType") or "")
        action = str(event.get("entityAction") or "UPDATE").upper()
        entity_id = _int(event.get("entityId"))
        if event_type in NOT_MODELLED:
            plan.not_modelled[event_type] += 1
            continue
        target = EVENT_TARGETS.get(event_type)
        if target is None:
            plan.unknown[event_type or "<missing eventType>"] += 1
            continue
        if entity_id is None:
            plan.unknown[f"{event_type} without entityId"] += 1
            continue
        if target in _TYPE_SCOPED:
            if event.get("entityType") not in _ACCOMMODATION_ENTITY_TYPES:
                plan.not_modelled[f"{event_type}/{event.get('entityType')}"] += 1
                continue
            # A rate or availability DELETE still means "re-read this type's scope".
            last[(target, entity_id)] = "REFRESH"
            continue
        if action == "MERGE" and target == "customers":
            old = _int(event.get("oldEntityId"))
            if old is None:
                plan.unknown["CUSTOMER_EVENT MERGE without oldEntityId"] += 1
            else:
                last[("customers", old)] = "DELETE"
                plan.merges.append(dict(event))
            last[("customers", entity_id)] = "REFRESH"
            continue
        last[(target, entity_id)] = "DELETE" if action == "DELETE" else "REFRESH"
    for (target, entity_id), what in last.items():
        (plan.delete if what == "DELETE" else plan.refresh)[target].add(entity_id)
    plan.refresh = dict(plan.refresh)
    plan.delete = dict(plan.delete)
    return plan


# ------------------------------------------------------------------------------- settings and state


@dataclass(frozen=True)
class ChangeSettings:
    """How a run lands data; mirrors `ExtractSettings` plus the incremental knobs."""

    today: date
    horizon_days: int = 90
    include_pii: bool = False
    flush_rows: int = DEFAULT_FLUSH_ROWS
    quarantine_threshold: float = 0.05
    max_events: int = DEFAULT_MAX_EVENTS
    sweep_overlap: timedelta = DEFAULT_SWEEP_OVERLAP
    event_overlap: timedelta = DEFAULT_EVENT_OVERLAP
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    availability_full_share: float = AVAILABILITY_FULL_SHARE
    # Sweep: reconcile reservation ids every N business days (0 = off; assets/reconcile.py).
    id_reconcile_every_days: int = reconcile.DEFAULT_EVERY_DAYS
    # Worker processes for big streams' pages (`ExtractSettings.normalise_workers`).
    normalise_workers: int | None = None

    @property
    def horizon(self) -> tuple[date, date]:
        return self.today, self.today + timedelta(days=max(self.horizon_days, 1) - 1)

    def extract_settings(self) -> ExtractSettings:
        return ExtractSettings(
            include_pii=self.include_pii,
            flush_rows=self.flush_rows,
            quarantine_threshold=self.quarantine_threshold,
            today=self.today,
            horizon_days=self.horizon_days,
            normalise_workers=self.normalise_workers,
        )


def event_time(text: Any) -> datetime | None:
    """An eventDate as a naive UTC datetime (the service writes UTC without offset); None if
    missing or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def _unique_events(events: Iterable[Record]) -> list[Record]:
    """Events without repeats of an eventId (first kept); events without an id are kept."""
    seen: set[int] = set()
    out: list[Record] = []
    for e in events:
        event_id = _int(e.get("eventId"))
        if event_id is not None:
            if event_id in seen:
                continue
            seen.add(event_id)
        out.append(e)
    return out


def not_yet_applied(window: Iterable[Record], cursor: Cursor) -> list[Record]:
    """Events of the overlap window (ids <= the cursor) that the cursor does not list as applied:
    the ones that became visible late. With an unknown set (None) that is all of them."""
    applied = set(cursor.applied_ids) if cursor.applied_ids is not None else set()
    out = []
    for e in _unique_events(window):
        event_id = _int(e.get("eventId"))
        if event_id is None or event_id > cursor.event_id or event_id in applied:
            continue
        out.append(e)
    return out


def next_cursor(
    cursor: Cursor,
    window: Sequence[Record] | None,
    events: Sequence[Record],
    *,
    overlap: timedelta,
    business_date: date,
    batch_id: str,
) -> Cursor:
    """The cursor after a run that read the overlap `window` (None: not read) and the `events`
    after the cursor, and applied them all.

    `event_id` moves to the newest id read (never back), `event_date` to the newest eventDate
    seen (the timestamp high-water mark). The applied set is every id read (window and new
    events) whose eventDate is within `overlap` before the new mark: together the two reads
    covered that whole span below the new id, so the next window needs to apply only what is
    not in it. Without a window read the set is unknown (None).
    """
    ids = [i for i in (_int(e.get("eventId")) for e in events) if i is not None]
    last_id = max([cursor.event_id, *ids])
    mark_text, mark = cursor.event_date, event_time(cursor.event_date)
    seen = [*(window or ()), *events]
    for e in seen:
        moment = event_time(e.get("eventDate"))
        if moment is not None and (mark is None or moment > mark):
            mark, mark_text = moment, e.get("eventDate")
    applied: tuple[int, ...] | None = None
    if window is not None and mark is not None:
        floor = mark - overlap
        kept: set[int] = set()
        for e in seen:
            event_id, moment = _int(e.get("eventId")), event_time(e.get("eventDate"))
            in_window = moment is not None and moment >= floor
            if event_id is not None and event_id <= last_id and in_window:
                kept.add(event_id)
        applied = tuple(sorted(kept))
    return Cursor(
        event_id=last_id,
        event_date=mark_text,
        business_date=business_date,
        batch_id=batch_id,
        applied_ids=applied,
    )


def _drop_landed_merges(lake: Lake, plan: ChangePlan) -> int:
    """Leave out of the plan the MERGE events whose `customer_merges` row the lake already has
    (same eventId): a replayed window (unknown applied set) or a rerun after a crash must not
    land a merge row twice. The survivor's refresh and the removed id's tombstone stay (they are
    idempotent). Returns how many were dropped."""
    if not plan.merges:
        return 0
    current = lake.current("customer_merges")
    landed = {i for i in current.column("event_id").to_pylist() if i is not None}
    if not landed:
        return 0
    keep = [m for m in plan.merges if _int(m.get("eventId")) not in landed]
    dropped = len(plan.merges) - len(keep)
    plan.merges = keep
    return dropped


def _window_supported(service: Any) -> bool:
    """Whether the facade's `events()` takes the window filters (`ReservationService` does; a
    test double without them runs without the window)."""
    import inspect

    events = getattr(service, "events", None)
    if events is None or getattr(service, "latest_event", None) is None:
        return False
    try:
        params = inspect.signature(events).parameters
    except (TypeError, ValueError):
        return False
    return "since" in params and "up_to_event_id" in params


# ------------------------------------------------------------------------------- landing


def _data_columns(schema: pa.Schema) -> list[str]:
    return [n for n in schema.names if not n.startswith("_")]


def _keys(table: pa.Table, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    if table.num_rows == 0:
        return []
    cols = [table.column(c).to_pylist() for c in columns]
    return list(zip(*cols, strict=True))


def tombstones(
    table: Table,
    keys: Iterable[tuple[Any, ...]],
    *,
    batch_id: str,
    batch_kind: str = "delta",
    source: str = EVENTS_SOURCE,
    include_pii: bool = False,
    extracted_at: datetime | None = None,
) -> pa.Table:
    """Rows that say "this key no longer exists": key columns set, `_is_deleted` true."""
    schema = table.arrow_schema(include_pii)
    at = extracted_at or datetime.now(UTC)
    rows = [
        {
            **dict(zip(table.key, key, strict=True)),
            "_batch_id": batch_id,
            "_batch_kind": batch_kind,
            "_extracted_at": at,
            "_source": source,
            "_is_deleted": True,
        }
        for key in keys
    ]
    return pa.Table.from_pylist(rows, schema=schema)


@dataclass
class LandReport:
    """What one landing wrote: rows per table, tombstones, records and quarantine.

    The same report for every run mode; a full extract also fills the file details, the
    requests and seconds of its own stream (`from_extract`).
    """

    spec: str
    batch_kind: str
    records: int = 0
    quarantined: int = 0
    tombstones: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    skipped: bool = False  # compared equal to the lake: nothing written
    requests: int = 0  # this stream's own requests (full extracts; 0 when only run-level)
    seconds: float = 0.0
    calls: int = 0
    normalise_workers: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    dropped_pii_fields: dict[str, int] = field(default_factory=dict)
    bytes_written: dict[str, int] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    unknown_fields: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def from_extract(cls, name: str, rep: ExtractReport, seconds: float = 0.0) -> LandReport:
        return cls(
            name,
            rep.batch_kind,
            records=rep.records,
            quarantined=rep.quarantined,
            rows={t: tr.rows for t, tr in rep.tables.items()},
            requests=int(rep.requests),
            seconds=seconds,
            calls=rep.calls,
            normalise_workers=rep.normalise_workers,
            reasons=dict(rep.reasons),
            dropped_pii_fields=dict(rep.dropped_pii_fields),
            bytes_written={t: tr.bytes_written for t, tr in rep.tables.items()},
            files={t: list(tr.files) for t, tr in rep.tables.items()},
            unknown_fields={t: dict(tr.unknown_fields) for t, tr in rep.tables.items()},
        )


class Landing:
    """One spec's writers in the run's batch: pages and tombstones in, children committed first.

    Mirrors `assets.extract.run_spec` (same normaliser, quarantine rule and commit order) but
    also takes tombstones and can hold rows back until a comparison decides they should land.
    """

    def __init__(
        self, lake: Lake, spec: EndpointSpec, batch_id: str, kind: str, settings: ChangeSettings
    ) -> None:
        self.lake, self.spec, self.batch_id, self.kind = lake, spec, batch_id, kind
        self.settings = settings
        self.normaliser = Normaliser(
            spec, batch_id=batch_id, batch_kind=kind, include_pii=settings.include_pii
        )
        self.report = LandReport(spec.name, kind)
        self.seen: set[tuple[Any, ...]] = set()
        self.buffer: dict[str, list[pa.Table]] = {t.name: [] for t in spec.tables}
        self._quarantine: list[pa.Table] = []
        self._tombstones: list[pa.Table] = []

    @property
    def root(self) -> Table:
        return self.spec.table

    def add_page(self, page: list[Record], extracted_at: datetime | None = None) -> None:
        if not page:
            return
        result = self.normaliser.normalise(page, extracted_at or datetime.now(UTC))
        self.report.records += result.records
        self.report.quarantined += result.quarantined
        for name, table in result.tables.items():
            if table.num_rows:
                self.buffer[name].append(table)
        if result.quarantine.num_rows:
            self._quarantine.append(result.quarantine)
        self.seen.update(_keys(result.tables[self.root.name], self.root.key))

    def fresh(self, name: str | None = None) -> pa.Table:
        """Rows buffered so far for one of the spec's tables (the root by default)."""
        table = TABLES[name or self.root.name]
        parts = self.buffer[table.name]
        schema = table.arrow_schema(self.settings.include_pii)
        return pa.concat_tables(parts).cast(schema) if parts else schema.empty_table()

    def keep_only(self, keys: set[tuple[Any, ...]], columns: Sequence[str] | None = None) -> None:
        """Drop buffered rows (root and children) whose root key is not in `keys`.

        `columns` names other root columns the keys refer to (journal entries by `report_id`).
        """
        for table in self.spec.tables:
            if table is self.root:
                cols = list(columns or self.root.key)
            else:  # children link to the root through their parent key columns
                cols = list(table.parent_key) if table.parent == self.root.name else []
            if not cols:
                continue
            kept = []
            for part in self.buffer[table.name]:
                mask = [k in keys for k in _keys(part, cols)]
                kept.append(part.filter(pa.array(mask, type=pa.bool_())))
            self.buffer[table.name] = [p for p in kept if p.num_rows]

    def add_tombstones(self, keys: Iterable[tuple[Any, ...]], source: str = EVENTS_SOURCE) -> None:
        keys = sorted(set(keys) - self.seen)
        if not keys:
            return
        self._tombstones.append(
            tombstones(
                self.root,
                keys,
                batch_id=self.batch_id,
                batch_kind=self.kind,
                source=source,
                include_pii=self.settings.include_pii,
            )
        )
        self.report.tombstones += len(keys)

    def commit(self) -> LandReport:
        """Write the batch (children first); raise when too much was quarantined."""
        report = self.report
        if self._quarantine:
            qw = self.lake.quarantine_writer(
                self.root.name, self.batch_id, self.settings.flush_rows
            )
            for q in self._quarantine:
                qw.add(q)
            qw.commit()
        rate = report.quarantined / report.records if report.records else 0.0
        if rate > self.settings.quarantine_threshold:
            raise QuarantineRateExceeded(
                f"table {self.root.name!r}: {report.quarantined} of {report.records} refetched "
                f"records ({rate:.1%}) failed validation, above the threshold of "
                f"{self.settings.quarantine_threshold:.1%}; nothing was committed. Bad records: "
                f"{self.lake.quarantine_dir(self.root.name)}"
            )
        kind = self.kind
        if report.quarantined and kind == "full":
            kind = "delta"  # a full batch missing records would drop their keys
        report.batch_kind = kind
        writers: dict[str, PartWriter] = {}
        for table in self.spec.tables:
            w = self.lake.writer(
                table,
                self.batch_id,
                include_pii=self.settings.include_pii,
                flush_rows=self.settings.flush_rows,
            )
            for part in self.buffer[table.name]:
                w.add(part)
            if table is self.root:
                for t in self._tombstones:
                    w.add(t)
            writers[table.name] = w
        try:
            for table in reversed(self.spec.tables):
                w = writers[table.name]
                w.commit(kind if kind != self.kind else None)
                report.rows[table.name] = w.rows
        except BaseException:
            for w in writers.values():
                w.abort()
            raise
        return report


# ------------------------------------------------------------------------------- comparison


def _canon(value: Any) -> Any:
    if isinstance(value, float) and value != value:  # NaN
        return "NaN"
    if isinstance(value, list):
        return tuple(_canon(v) for v in value)
    return value


def fingerprints(
    table: pa.Table, group: Sequence[str], columns: Sequence[str] | None = None
) -> dict[tuple[Any, ...], str]:
    """Content hash per group of rows (non-lineage columns), order-independent within a group."""
    columns = list(columns or _data_columns(table.schema))
    rows: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    if table.num_rows:
        data = {c: table.column(c).to_pylist() for c in columns}
        keys = _keys(table, group)
        for i, key in enumerate(keys):
            rows[key].append(repr(tuple(_canon(data[c][i]) for c in columns)))
    return {
        k: hashlib.blake2b("\n".join(sorted(v)).encode(), digest_size=16).hexdigest()
        for k, v in rows.items()
    }


@dataclass
class Diff:
    """How fresh rows differ from the lake's current state, by root key."""

    new: set[tuple[Any, ...]] = field(default_factory=set)
    changed: set[tuple[Any, ...]] = field(default_factory=set)
    removed: set[tuple[Any, ...]] = field(default_factory=set)

    @property
    def differing(self) -> set[tuple[Any, ...]]:
        return self.new | self.changed

    @property
    def count(self) -> int:
        return len(self.new) + len(self.changed) + len(self.removed)

    def summary(self, sample: int = 10) -> dict[str, Any]:
        return {
            "new": len(self.new),
            "changed": len(self.changed),
            "removed": len(self.removed),
            "sample": [list(k) for k in sorted(self.differing | self.removed, key=repr)[:sample]],
        }


def diff_against_lake(
    lake: Lake,
    landing: Landing,
    *,
    only_keys: set[tuple[Any, ...]] | None = None,
    detect_removed: bool = False,
) -> Diff:
    """Compare a landing's buffered rows (root + children) with the lake's current state.

    `only_keys` limits the comparison to those root keys (e.g. reservations modified since a
    mark); `detect_removed` reports current keys the fresh list lacks (full lists only).
    """
    spec = landing.spec
    root = spec.table
    group = list(root.key)
    fresh_fp: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    lake_fp: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for table in spec.tables:
        if table is root:
            cols = group
        elif table.parent == root.name:
            cols = list(table.parent_key)
        else:
            continue
        fresh = landing.fresh(table.name)
        current = lake.current(table.name)
        data_cols = [c for c in _data_columns(fresh.schema) if c in current.schema.names]
        if only_keys is not None and current.num_rows:
            mask = [k in only_keys for k in _keys(current, cols)]
            current = current.filter(pa.array(mask, type=pa.bool_()))
        for k, v in fingerprints(fresh, cols, data_cols).items():
            fresh_fp[k].append(f"{table.name}:{v}")
        for k, v in fingerprints(current, cols, data_cols).items():
            lake_fp[k].append(f"{table.name}:{v}")
    out = Diff()
    root_fresh = set(_keys(landing.fresh(), group))
    root_lake = set(_keys(_current_filtered(lake, root.name, group, only_keys), group))
    for key in root_fresh:
        if key not in root_lake:
            out.new.add(key)
        elif sorted(fresh_fp.get(key, [])) != sorted(lake_fp.get(key, [])):
            out.changed.add(key)
    if detect_removed:
        out.removed = root_lake - root_fresh
    return out


def _current_filtered(
    lake: Lake, table: str, cols: Sequence[str], keys: set[tuple[Any, ...]] | None
) -> pa.Table:
    current = lake.current(table)
    if keys is None or not current.num_rows:
        return current
    mask = [k in keys for k in _keys(current, cols)]
    return current.filter(pa.array(mask, type=pa.bool_()))


# ------------------------------------------------------------------------------- fetching


def _stamp(pages: Pages) -> AsyncIterator[tuple[list[Record], datetime]]:
    async def gen() -> AsyncIterator[tuple[list[Record], datetime]]:
        async for page in pages:
            yield list(page), datetime.now(UTC)

    return gen()


def _by_ids(service: Any, target: Target, ids: Sequence[int]) -> Pages:
    """Id-list refetch of a keyed target, in URL-safe batches (the facade batches)."""
    if target.name == "reservations":
        return service.reservation_details(ids=ids)
    if target.name == "customers":
        return service.customers(ids=ids)
    if not target.params:
        return service.get_by_ids(target.path, target.id_field, ids)
    # get_by_ids takes no extra params; the details list needs returnSections.
    from service.api import merge
    from service.filters import F, batch_ids

    cfg = service.config
    budget = max(64, cfg.max_url_length - len(cfg.base_url) - len(target.path) - 300)
    return merge(
        [
            service.client.iter_keyset(
                target.path,
                target.id_field,
                params={**target.params, "filter": [F(target.id_field).isin(batch).render()]},
            )
            for batch in batch_ids(ids, budget=budget)
        ],
        maxsize=max(2, service.client.limiter.limit * 2),
    )


def _full_list(service: Any, spec: EndpointSpec) -> Pages:
    return getattr(service, spec.method)(**dict(spec.kwargs))


@dataclass
class RunReport:
    """What a run did, for logs, Dagster metadata and the benchmark."""

    batch_id: str
    mode: str
    plan: dict[str, Any] = field(default_factory=dict)
    landed: dict[str, LandReport] = field(default_factory=dict)
    diffs: dict[str, dict[str, Any]] = field(default_factory=dict)
    cursor_before: int | None = None
    cursor_after: int | None = None
    requests: int = 0
    seconds: float = 0.0
    day_rolled: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def tables(self) -> set[str]:
        """Lake tables that received rows (including tombstones)."""
        out: set[str] = set()
        for rep in self.landed.values():
            if rep.skipped:
                continue
            out.update(name for name, rows in rep.rows.items() if rows)
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "mode": self.mode,
            "cursor_before": self.cursor_before,
            "cursor_after": self.cursor_after,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "day_rolled": self.day_rolled,
            "plan": self.plan,
            "tables": sorted(self.tables),
            "rows": {
                k: {
                    "rows": v.rows,
                    "tombstones": v.tombstones,
                    "records": v.records,
                    "quarantined": v.quarantined,
                    "kind": v.batch_kind,
                }
                for k, v in self.landed.items()
                if not v.skipped
            },
            "diffs": self.diffs,
            "notes": self.notes,
        }


class ChangeRun:
    """One run against an open service: each step lands its tables in the shared batch.

    `on_landed(name)` is called after each landing commits; tests raise from it to simulate a
    process killed between two tables.
    """

    def __init__(
        self,
        lake: Lake,
        service: Any,
        settings: ChangeSettings,
        batch_id: str,
        report: RunReport,
        on_landed: Callable[[str], None] | None = None,
    ) -> None:
        self.lake, self.service, self.settings = lake, service, settings
        self.batch_id, self.report, self.on_landed = batch_id, report, on_landed
        self._landings: set[str] = set()

    def landing(self, spec_name: str, kind: str = "delta") -> Landing:
        # Part files are named after the batch: a second landing of the same spec in one batch
        # would overwrite the first one's parts (and its quarantine), losing rows silently.
        if spec_name in self._landings:
            raise RuntimeError(
                f"internal error: {spec_name!r} landed twice in batch {self.batch_id}; put both "
                "into one landing (the second would overwrite the first one's files)"
            )
        self._landings.add(spec_name)
        return Landing(self.lake, SPEC_BY_NAME[spec_name], self.batch_id, kind, self.settings)

    def _done(self, key: str, landing: Landing, *, skipped: bool = False) -> LandReport:
        if skipped:
            landing.report.skipped = True
            self.report.landed[key] = landing.report
            return landing.report
        rep = landing.commit()
        self.report.landed[key] = rep
        if self.on_landed is not None:
            self.on_landed(key)
        return rep

    async def _fill(self, landing: Landing, pages: Pages) -> None:
        async for page, at in _stamp(pages):
            landing.add_page(page, at)

    # -- events -------------------------------------------------------------------------

    async def read_events(self, after: int) -> list[Record]:
        """Events after the cursor, in eventId order, up to `max_events` (whole pages)."""
        events: list[Record] = []
        pages = self.service.events(after_event_id=after)
        try:
            async for page in pages:
                events.extend(page)
                if len(events) >= self.settings.max_events:
                    self.report.notes.append(
                        f"stopped after {len(events)} events (max_events); the next run continues"
                    )
                    break
        finally:
            aclose = getattr(pages, "aclose", None)
            if aclose is not None:
                await aclose()
        return events

    async def read_window(self, cursor: Cursor) -> list[Record] | None:
        """The events at or below the cursor with eventDate >= the cursor's date mark minus
        `event_overlap` (None when no window is read: overlap 0, or a facade without it).

        Normally one small page. Without a date mark (the bootstrap, old cursor rows) the mark
        is the eventDate of the newest event at or below the cursor: one more small request.
        """
        overlap = self.settings.event_overlap
        if overlap <= timedelta(0):
            return None
        if cursor.event_id <= 0:
            return []  # nothing lies at or below it
        if not _window_supported(self.service):
            self.report.notes.append("the service facade cannot filter events by date: no window")
            return None
        mark = event_time(cursor.event_date)
        if mark is None:
            newest = await self.service.latest_event(up_to_event_id=cursor.event_id)
            mark = event_time(newest.get("eventDate")) if newest else None
            if mark is None:
                return [] if newest is None else None
        events: list[Record] = []
        pages = self.service.events(since=mark - overlap, up_to_event_id=cursor.event_id)
        try:
            async for page in pages:
                events.extend(page)
        except BadRequest as exc:
            # The interface does not show the feed's filters: a service that refuses eventDate
            # filtering must not stop every incremental run. The run goes on without the window
            # (the old eventId-only cursor) and says so; the applied set becomes unknown.
            note = (
                "the service refused the overlap window's eventDate filter "
                f"({exc.server_message or exc}); this run read no window. Set the incremental "
                "job's event_overlap_seconds to 0 to stop trying."
            )
            log.warning(note)
            self.report.notes.append(note)
            return None
        finally:
            aclose = getattr(pages, "aclose", None)
            if aclose is not None:
                await aclose()
        return events

    # -- keyed targets --------------------------------------------------------------------

    async def refresh_keyed(
        self, target: Target, refresh: set[int], delete: set[int]
    ) -> LandReport | None:
        """Refetch ids; tombstone deleted ids and requested ids the service no longer has."""
        if not refresh and not delete:
            return None
        landing = self.landing(target.spec)
        if refresh:
            await self._fill(landing, _by_ids(self.service, target, sorted(refresh)))
        missing = refresh if not landing.report.quarantined else set()
        landing.add_tombstones([(i,) for i in sorted(delete | missing)])
        return self._done(target.name, landing)

    # -- type-scoped targets -----------------------------------------------------------------

    async def refresh_rates(self, resources: set[int], removed: set[int]) -> LandReport | None:
        """All rates of the changed types; rates that vanished from a type are tombstoned."""
        if not resources and not removed:
            return None
        from service.api import merge

        landing = self.landing("rates")
        fetch = sorted(resources - removed)
        if fetch:
            limit = max(2, self.service.client.limiter.limit * 2)
            await self._fill(landing, merge([self.service.rates(r) for r in fetch], maxsize=limit))
        if not landing.report.quarantined:
            scope = resources | removed
            current = self.lake.current("rates")
            if current.num_rows:
                mask = pc.is_in(current.column("resource_id"), pa.array(sorted(scope), pa.int64()))
                landing.add_tombstones(_keys(current.filter(mask), ["rate_id"]))
        return self._done("rates", landing)

    async def refresh_availability(
        self, resources: set[int], removed: set[int], *, whole_horizon: bool
    ) -> LandReport | None:
        """The horizon for the changed types, or the whole horizon as a full batch."""
        start, end = self.settings.horizon
        if whole_horizon:
            landing = self.landing("availability", "full")
            await self._fill(landing, self.service.availability(start, end))
            return self._done("availability", landing)
        if not resources and not removed:
            return None
        landing = self.landing("availability")
        fetch = sorted(resources - removed)
        if len(fetch) == 1:
            await self._fill(landing, self.service.availability(start, end, resource_id=fetch[0]))
        elif fetch:
            # One call per window for every type costs fewer requests (the daily quota) than
            # one per window per changed type; the other types' records are dropped here.
            await self._fill(landing, _only_resources(self.service.availability(start, end), fetch))
        if not landing.report.quarantined:
            current = self.lake.current("availability")
            if current.num_rows:
                in_scope = pc.is_in(
                    current.column("resource_id"), pa.array(sorted(resources | removed), pa.int64())
                )
                in_window = pc.and_(
                    pc.greater_equal(current.column("arrival_date"), pa.scalar(start, pa.date32())),
                    pc.less_equal(current.column("arrival_date"), pa.scalar(end, pa.date32())),
                )
                gone = pc.is_in(
                    current.column("resource_id"), pa.array(sorted(removed), pa.int64())
                )
                mask = pc.or_(pc.and_(in_scope, in_window), gone)
                landing.add_tombstones(
                    _keys(current.filter(mask), ["resource_id", "arrival_date", "duration"])
                )
        return self._done("availability", landing)

    # -- merges -----------------------------------------------------------------------------

    def land_merges(self, merges: list[Record]) -> LandReport | None:
        if not merges:
            return None
        landing = self.landing("customer_merges")
        landing.add_page(merges)
        return self._done("customer_merges", landing)

    # -- full lists compared with the lake -------------------------------------------------------

    async def reconcile_list(self, spec_name: str) -> Diff:
        """Re-read a small list in full; land it as a full batch only when it differs."""
        spec = SPEC_BY_NAME[spec_name]
        landing = self.landing(spec_name, "full")
        await self._fill(landing, _full_list(self.service, spec))
        diff = diff_against_lake(self.lake, landing, detect_removed=True)
        if diff.removed and not landing.seen:
            # Every record gone at once is far likelier a 204 outage or another tenant's
            # credentials than a real deletion. Reported as removed, it would make the day-roll
            # run tombstone every accommodation type's rates (measured: 6 of 6 in the test
            # fixture). Single deletions still arrive as DELETE events.
            note = (
                f"{spec_name}: the service listed no usable record (none, or all quarantined) "
                f"while the lake has {len(diff.removed)}; the list was not landed (kept as it "
                "was). Check the "
                "service settings (base URL, client id, scope) and the service's status."
            )
            log.warning(note)
            self.report.notes.append(note)
            self.report.diffs[spec_name] = {**diff.summary(), "refused": "empty read"}
            self._done(spec_name, landing, skipped=True)
            return Diff()
        self.report.diffs[spec_name] = diff.summary()
        self._done(spec_name, landing, skipped=diff.count == 0)
        return diff

    # -- finance (no events) ------------------------------------------------------------------

    async def refresh_finance(self, since: date | None) -> None:
        """Journal reports open since `since` (and new ones) with their entries; recent clearances.

        Entries are children of their report in the lake, so a report is relanded together with
        all its entries, and only when the pair differs from the lake.
        """
        from service.api import merge
        from service.filters import F

        reports = self.landing("journal_reports")
        await self._fill(reports, self.service.journal_reports())
        fresh = reports.fresh()
        known = set(self.lake.current_ids("journal_reports", "journal_report_id"))
        candidates: set[int] = set()
        for rid, period_to in zip(
            fresh.column("journal_report_id").to_pylist(),
            fresh.column("period_to").to_pylist(),
            strict=True,
        ):
            if rid not in known or since is None or period_to is None or period_to >= since:
                candidates.add(rid)
        entries = self.landing("journal_entries")
        if candidates:
            limit = max(2, self.service.client.limiter.limit * 2)
            await self._fill(
                entries,
                merge([self.service.journal_entries(r) for r in sorted(candidates)], maxsize=limit),
            )
        # Which candidate reports (row + entries) differ from the lake?
        keys = {(r,) for r in candidates}
        reports.keep_only(keys)
        rep_fp = fingerprints(reports.fresh(), ["journal_report_id"])
        ent_fp = fingerprints(entries.fresh(), ["report_id"])
        lake_rep = fingerprints(
            _current_filtered(self.lake, "journal_reports", ["journal_report_id"], keys),
            ["journal_report_id"],
            _data_columns(reports.fresh().schema),
        )
        lake_ent = fingerprints(
            _current_filtered(self.lake, "journal_entries", ["report_id"], keys),
            ["report_id"],
            _data_columns(entries.fresh().schema),
        )
        differing = {
            k for k in keys if (rep_fp.get(k), ent_fp.get(k)) != (lake_rep.get(k), lake_ent.get(k))
        }
        if reports.report.quarantined or entries.report.quarantined:
            differing = keys  # cannot trust the comparison; land what we have as a delta
        reports.keep_only(differing)
        entries.keep_only(differing, ["report_id"])
        self.report.diffs["journal_reports"] = {
            "reports_compared": len(keys),
            "reports_differing": len(differing),
        }
        # Entries (children) before their reports (parents).
        self._done("journal_entries", entries, skipped=not differing)
        self._done("journal_reports", reports, skipped=not differing)

        clear = self.landing("cash_clearances")
        params: dict[str, Any] = {}
        if since is not None:
            params["filter"] = [(F("clearanceDate") >= since - timedelta(days=1)).render()]
        await self._fill(
            clear,
            self.service.client.iter_keyset(
                "/cashreservations/clearance",
                "cashClearanceId",
                params=params or None,
            ),
        )
        keys_c = set(_keys(clear.fresh(), ["cash_clearance_id"]))
        diff = diff_against_lake(self.lake, clear, only_keys=keys_c)
        clear.keep_only(diff.differing)
        self.report.diffs["cash_clearances"] = diff.summary()
        self._done("cash_clearances", clear, skipped=not diff.differing)


# ------------------------------------------------------------------------------- runs


def _run(coro_factory: Callable[[], Any]) -> Any:
    from service.sync import run

    return run(coro_factory)


def full_snapshot(
    lake: Lake,
    open_client: OpenClient,
    settings: ChangeSettings,
    batch_id: str,
    *,
    specs: Sequence[EndpointSpec] = SPECS,
    failures: dict[str, Exception] | None = None,
) -> dict[str, LandReport]:
    """The full extract (`assets.extract.run_spec` per spec), in dependency order.

    With `failures` given, a spec that fails is recorded there and the others go on (those that
    read its tables are left out); without it, the first failure raises.
    """
    done: set[str] = set()
    failed: set[str] = set()
    reports: dict[str, LandReport] = {}
    pending = list(specs)
    while pending:
        ready = [
            s
            for s in pending
            if all(
                d in done or d not in {t.name for p in pending for t in p.tables} for d in s.deps
            )
        ]
        if not ready:
            raise ValueError("endpoint specs have a dependency cycle")
        for spec in ready:
            pending.remove(spec)
            if failed & set(spec.deps):
                continue
            started = time.perf_counter()
            try:
                rep = run_spec(
                    spec,
                    lake=lake,
                    batch_id=batch_id,
                    settings=settings.extract_settings(),
                    open_client=open_client,
                )
            except Exception as exc:
                if failures is None:
                    raise
                failures[spec.name] = exc
                failed.update(t.name for t in spec.tables)
                continue
            reports[spec.name] = LandReport.from_extract(
                spec.name, rep, time.perf_counter() - started
            )
            done.update(t.name for t in spec.tables)
    return reports


def land_full(
    lake: Lake,
    open_client: OpenClient,
    settings: ChangeSettings,
    *,
    batch_id: str | None = None,
    specs: Sequence[EndpointSpec] = SPECS,
    failures: dict[str, Exception] | None = None,
) -> RunReport:
    """A full snapshot of `specs` as one run (the event cursor is not touched); the tables it
    landed are marked pending for the warehouse."""
    started = time.perf_counter()
    with writer_lock(lake, settings.lock_timeout):
        # The run's own batch id, as given: re-executing a full run overwrites its own files.
        batch_id = batch_id or next_batch_id(lake)
        report = RunReport(batch_id, "full")
        report.landed.update(
            full_snapshot(lake, open_client, settings, batch_id, specs=specs, failures=failures)
        )
        report.requests = sum(r.requests for r in report.landed.values())
        mark_warehouse_pending(lake, batch_id, report.tables)
    report.seconds = time.perf_counter() - started
    return report


def _latest_modified(lake: Lake) -> str | None:
    current = lake.current("reservations")
    if not current.num_rows or "modified_date" not in current.schema.names:
        return None
    top = pc.max(current.column("modified_date")).as_py()
    return _service_time(top) if top is not None else None


def _service_time(moment: datetime) -> str:
    """The service's datetime text: UTC, no offset, milliseconds."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def bootstrap(
    lake: Lake,
    open_client: OpenClient,
    settings: ChangeSettings,
    *,
    batch_id: str | None = None,
) -> RunReport:
    """First run: the feed's high-water mark, then the full snapshot, then the cursor.

    Reading the mark *before* the snapshot means a change made while the snapshot runs has an
    event after the mark, so the first incremental run replays it; reading it after would lose it.
    """
    started = time.perf_counter()
    batch_id = fresh_batch_id(lake, batch_id)
    report = RunReport(batch_id, "bootstrap")

    async def mark() -> tuple[int, str | None, int]:
        async with open_client() as service:
            if getattr(service, "latest_event", None) is not None:
                # The newest event's id and date in one request: the date is the first
                # incremental run's overlap mark (without it, that run asks for it).
                newest = await service.latest_event()
                hwm = _int(newest.get("eventId")) if newest else None
                when = newest.get("eventDate") if newest and hwm is not None else None
            else:
                hwm, when = await service.latest_event_id(), None
            return int(hwm or 0), when if isinstance(when, str) else None, service_requests(service)

    with writer_lock(lake, settings.lock_timeout):
        hwm, hwm_date, used = _run(mark)
        report.landed.update(full_snapshot(lake, open_client, settings, batch_id))
        report.requests = used + sum(r.requests for r in report.landed.values())
        write_cursor(lake, batch_id, Cursor(hwm, hwm_date, settings.today, batch_id))
        if lake.read_state(SWEEP_STATE) is None:
            lake.write_state(
                SWEEP_STATE,
                batch_id,
                {
                    "modified_since": _latest_modified(lake),
                    "business_date": settings.today.isoformat(),
                    "batch_id": batch_id,
                },
            )
        mark_warehouse_pending(lake, batch_id, set(TABLES))
    report.cursor_after = hwm
    report.seconds = time.perf_counter() - started
    return report


def apply_changes(
    lake: Lake,
    open_client: OpenClient,
    settings: ChangeSettings,
    *,
    batch_id: str | None = None,
    on_landed: Callable[[str], None] | None = None,
    bootstrap_if_needed: bool = True,
) -> RunReport:
    """One incremental run: events since the cursor -> delta batches -> cursor -> (warehouse).

    Without a cursor the run bootstraps (mark, full snapshot, cursor). The warehouse is not
    built here: the tables that changed are recorded as pending (`warehouse_pending` state) and
    `refresh_warehouse` builds the models that depend on them.
    """
    cursor = read_cursor(lake)
    if cursor is None:
        if not bootstrap_if_needed:
            raise RuntimeError("no event cursor in the lake: run the bootstrap (full) first")
        return bootstrap(lake, open_client, settings, batch_id=batch_id)
    started = time.perf_counter()
    with writer_lock(lake, settings.lock_timeout):
        cursor = read_cursor(lake) or cursor  # another writer may have moved it meanwhile
        batch_id = fresh_batch_id(lake, batch_id)
        report = RunReport(batch_id, "incremental", cursor_before=cursor.event_id)
        day_rolled = cursor.business_date is not None and cursor.business_date != settings.today
        report.day_rolled = day_rolled

        async def main() -> Cursor:
            async with open_client() as service:
                run = ChangeRun(lake, service, settings, batch_id, report, on_landed)
                try:
                    return await _incremental(run, cursor, day_rolled)
                finally:
                    report.requests = service_requests(service)

        with _pending_on_failure(lake, batch_id, report):
            new_cursor = _run(main)
        # Only now, with every table committed, may the cursor move.
        write_cursor(lake, batch_id, new_cursor)
        report.cursor_after = new_cursor.event_id
        mark_warehouse_pending(lake, batch_id, report.tables)
    report.seconds = time.perf_counter() - started
    return report


async def _incremental(run: ChangeRun, cursor: Cursor, day_rolled: bool) -> Cursor:
    settings, lake = run.settings, run.lake
    # The overlap window first (events at or below the cursor that became visible late), then
    # the events after the cursor; the window's events the cursor lists as applied are skipped.
    window = await run.read_window(cursor)
    events = await run.read_events(cursor.event_id)
    late = not_yet_applied(window or (), cursor)
    plan = plan_changes(_unique_events([*late, *events]))
    merges_dropped = _drop_landed_merges(lake, plan)
    run.report.plan = plan.summary()
    run.report.plan["window"] = {
        "read": None if window is None else len(window),
        "applied": len(late),
        "merges_already_landed": merges_dropped,
    }
    if late:
        log.info("%d event(s) in the overlap window had not been applied yet", len(late))
    if plan.not_modelled:
        log.info("events not modelled (counted, skipped): %s", dict(plan.not_modelled))
    if plan.unknown:
        log.warning("unknown events (counted, skipped): %s", dict(plan.unknown))

    # Reference data first: rates and availability scopes depend on which types still exist.
    removed_types = set(plan.delete.get("accommodation_types", set()))
    reconciled: set[str] = set()
    if day_rolled:
        for name in REFERENCE_LISTS:
            diff = await run.reconcile_list(name)
            reconciled.add(name)
            if name == "accommodation_types":
                removed_types |= {k[0] for k in diff.removed}
    for name in ("distribution_channels", "locations", "accommodation_types", "units", "customers"):
        if name in reconciled:
            continue
        await run.refresh_keyed(
            TARGETS[name], plan.refresh.get(name, set()), plan.delete.get(name, set())
        )
    run.land_merges(plan.merges)
    await run.refresh_keyed(
        TARGETS["reservations"],
        plan.refresh.get("reservations", set()),
        plan.delete.get("reservations", set()),
    )
    await run.refresh_rates(plan.refresh.get("rates", set()), removed_types)
    avail = plan.refresh.get("availability", set())
    n_types = max(len(lake.current_ids("accommodation_types", "resource_id")), 1)
    whole = day_rolled or len(avail) >= settings.availability_full_share * n_types
    await run.refresh_availability(avail, removed_types, whole_horizon=whole)
    await run.refresh_finance(cursor.business_date)
    return next_cursor(
        cursor,
        window,
        events,
        overlap=settings.event_overlap,
        business_date=settings.today,
        batch_id=run.batch_id,
    )


def refresh_reservations(
    lake: Lake,
    open_client: OpenClient,
    settings: ChangeSettings,
    reservation_ids: Iterable[int],
    *,
    batch_id: str | None = None,
) -> RunReport:
    """Refetch these reservations (webhook pushes) as a delta; vanished ones are tombstoned.

    The event cursor is not touched: the feed will carry the same changes and refetching them
    again is harmless.
    """
    started = time.perf_counter()
    ids = {int(i) for i in reservation_ids}
    with writer_lock(lake, settings.lock_timeout):
        batch_id = fresh_batch_id(lake, batch_id)
        report = RunReport(batch_id, "webhook")
        report.plan = {"refresh": {"reservations": len(ids)}}

        async def main() -> None:
            async with open_client() as service:
                run = ChangeRun(lake, service, settings, batch_id, report)
                try:
                    await run.refresh_keyed(TARGETS["reservations"], ids, set())
                finally:
                    report.requests = service_requests(service)

        if ids:
            with _pending_on_failure(lake, batch_id, report):
                _run(main)
        mark_warehouse_pending(lake, batch_id, report.tables)
    report.seconds = time.perf_counter() - started
    return report


def sweep(
    lake: Lake,
    open_client: OpenClient,
    settings: ChangeSettings,
    *,
    batch_id: str | None = None,
    id_max_removed_share: float | None = None,
    id_page_size: int | None = None,
) -> RunReport:
    """Nightly reconciliation: what the feed may have missed, and what differed.

    First the reservation ids (`assets.reconcile`, every `settings.id_reconcile_every_days`):
    the service's complete id list against the lake's live reservations; those the service no
    longer has are tombstoned (children follow their parent). A read that finds no ids or would
    remove more than `id_max_removed_share` (default 20 %) of the lake raises
    `ReservationIdsRefused` before anything lands. Then reservations modified since the last
    sweep mark (minus an overlap) and the small reference lists in full are compared with the
    lake's current state; only records that differ land. `report.diffs` says, per table, how
    many were new, changed or removed, with a sample of keys (`reservation_ids`: the id read).
    """
    ids_settings = reconcile.IdReconcileSettings(
        every_days=settings.id_reconcile_every_days,
        max_removed_share=(
            reconcile.DEFAULT_MAX_REMOVED_SHARE
            if id_max_removed_share is None
            else id_max_removed_share
        ),
        page_size=id_page_size,
    )
    started = time.perf_counter()
    with writer_lock(lake, settings.lock_timeout):  # held for the id read and every landing
        batch_id = fresh_batch_id(lake, batch_id)
        report = RunReport(batch_id, "sweep")
        state = lake.read_state(SWEEP_STATE) or {}
        since_text = state.get("modified_since")
        if since_text is None:
            since_text = _latest_modified(lake)
        since = datetime.fromisoformat(since_text) if since_text else None
        prev_date = state.get("business_date")
        new_mark: dict[str, Any] = {}

        async def main() -> None:
            async with open_client() as service:
                run = ChangeRun(lake, service, settings, batch_id, report)
                try:
                    # Before any landing: a refused id read stops the sweep with nothing landed,
                    # and the lake snapshot it compares with cannot move during the read.
                    ids = await reconcile.reconcile_reservation_ids(run, ids_settings)
                    for name in REFERENCE_LISTS:
                        await run.reconcile_list(name)
                    landing = run.landing("reservations")
                    window = since - settings.sweep_overlap if since else None
                    await run._fill(landing, service.reservation_details(modified_since=window))
                    fetched = landing.fresh()
                    keys = set(_keys(fetched, ["reservation_id"]))
                    seen = pc.max(fetched.column("modified_date")).as_py() if keys else None
                    diff = diff_against_lake(lake, landing, only_keys=keys)
                    landing.keep_only(diff.differing)
                    # Same landing: two landings of one table in one batch would overwrite parts.
                    diff.removed = reconcile.tombstone_into(landing, ids)
                    report.diffs["reservations"] = diff.summary()
                    run._done("reservations", landing, skipped=not diff.count)
                    reconcile.record(run, ids)
                    new_mark["modified_since"] = (
                        _service_time(seen) if seen is not None else since_text
                    )
                    await run.refresh_finance(date.fromisoformat(prev_date) if prev_date else None)
                finally:
                    report.requests = service_requests(service)

        with _pending_on_failure(lake, batch_id, report):
            _run(main)
        lake.write_state(
            SWEEP_STATE,
            batch_id,
            {
                "modified_since": new_mark.get("modified_since", since_text),
                "business_date": settings.today.isoformat(),
                "batch_id": batch_id,
            },
        )
        mark_warehouse_pending(lake, batch_id, report.tables)
    report.seconds = time.perf_counter() - started
    return report


# ------------------------------------------------------------------------------- warehouse


@contextlib.contextmanager
def _pending_on_failure(lake: Lake, batch_id: str, report: RunReport) -> Iterator[None]:
    """If the run fails, still mark the tables it committed before failing as pending: they are
    in the lake, and a rerun may find nothing left to land for them (the sweep's diff, a
    reconciled list), so nothing else would get their models rebuilt."""
    try:
        yield
    except BaseException:
        try:
            mark_warehouse_pending(lake, batch_id, report.tables)
        except Exception:  # never hide the run's own error behind this one
            log.exception("could not mark the tables landed before the failure as pending")
        raise


async def _only_resources(pages: Pages, resource_ids: Iterable[int]) -> Pages:
    """Pages of availability records restricted to some accommodation types."""
    wanted = set(resource_ids)
    async for page in pages:
        # A record whose resourceId is damaged is kept, so that it reaches the quarantine.
        kept = [
            r for r in page if not isinstance(r.get("resourceId"), int) or r["resourceId"] in wanted
        ]
        if kept:
            yield kept
