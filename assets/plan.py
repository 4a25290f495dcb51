"""Events -> a refresh plan, and the cursor after a run: pure functions, tested without HTTP.

Events are hints, not data (interface "Events"; real-service-notes section 7): an event says
*which* entity changed, so the plan only collects ids per stream (the catalogue names the event
types of each), and the entities are refetched with id-list filters. The last action per entity
wins, DELETE becomes a tombstone, a customer MERGE is a `customer_merges` row plus a tombstone
for the removed customer plus a refresh of the survivor, and unknown event types are counted,
never fatal.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from assets.catalogue import CATALOGUE, Catalogue
from assets.settings import Record
from lake.state import Cursor

# IMPLY_EVENT: implies are served per holder only (no list to re-read), so not extracted
# (docs/interface-coverage.md).
NOT_MODELLED: frozenset[str] = frozenset({"IMPLY_EVENT"})
# Type-scoped events (rates, availability) may concern offers (entityType): a RATE_EVENT about an
# offer refreshes the offer (`Catalogue.entity_routes`); only accommodation types land as rates.
_ACCOMMODATION_ENTITY_TYPES = {None, "", "ACCOMMODATIONTYPE", "ACCOMMODATION_TYPE"}


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

    def tables(self, catalogue: Catalogue = CATALOGUE) -> set[str]:
        """Lake tables this plan writes (before the time-driven parts of a run)."""
        out: set[str] = set()
        for name in {k for k, v in self.refresh.items() if v} | {
            k for k, v in self.delete.items() if v
        }:
            out.update(catalogue.tables_of(name))
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


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def plan_changes(events: Iterable[Record], catalogue: Catalogue = CATALOGUE) -> ChangePlan:
    """Group events into ids to refetch or tombstone; pure, so its rules are testable.

    Events are taken in eventId order; for entities keyed by the event's id the *last* action
    decides (a DELETE after an UPDATE tombstones, an UPDATE after a DELETE refetches). A MERGE
    removes `oldEntityId` (tombstone) and changes `entityId` (refetch), and lands the event as a
    `customer_merges` row. Events about what the lake does not model (implies) or unknown types
    are counted and skipped, never fatal.
    """
    plan = ChangePlan()
    last: dict[tuple[str, int], str] = {}
    ordered = sorted(events, key=lambda e: as_int(e.get("eventId")) or 0)
    for event in ordered:
        plan.events += 1
        event_id = as_int(event.get("eventId"))
        if event_id is not None:
            if plan.first_event_id is None:
                plan.first_event_id = event_id
            plan.last_event_id = event_id
            plan.last_event_date = event.get("eventDate") or plan.last_event_date
        event_type = str(event.get("eventType") or "")
        action = str(event.get("entityAction") or "UPDATE").upper()
        entity_id = as_int(event.get("entityId"))
        if event_type in NOT_MODELLED:
            plan.not_modelled[event_type] += 1
            continue
        routed = catalogue.entity_routes.get((event_type, str(event.get("entityType") or "")))
        relists = catalogue.relisted_on.get(event_type, ())
        target = routed or (relists[0] if relists else catalogue.event_streams.get(event_type))
        if target is None:
            plan.unknown[event_type or "<missing eventType>"] += 1
            continue
        if entity_id is None:
            plan.unknown[f"{event_type} without entityId"] += 1
            continue
        if routed:
            # a change to a part of the record (an offer's rate): refetch it, whatever the action
            last[(routed, entity_id)] = "REFRESH"
            continue
        if relists:
            # the event names a scope (allotments: the type); any action re-reads the list(s)
            for name in relists:
                last[(name, entity_id)] = "REFRESH"
            continue
        if catalogue.by_name[target].type_scoped:
            if event.get("entityType") not in _ACCOMMODATION_ENTITY_TYPES:
                plan.not_modelled[f"{event_type}/{event.get('entityType')}"] += 1
                continue
            # A rate or availability DELETE still means "re-read this type's scope".
            last[(target, entity_id)] = "REFRESH"
            continue
        if action == "MERGE" and target == "customers":
            old = as_int(event.get("oldEntityId"))
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


def unique_events(events: Iterable[Record]) -> list[Record]:
    """Events without repeats of an eventId (first kept); events without an id are kept."""
    seen: set[int] = set()
    out: list[Record] = []
    for e in events:
        event_id = as_int(e.get("eventId"))
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
    for e in unique_events(window):
        event_id = as_int(e.get("eventId"))
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
    ids = [i for i in (as_int(e.get("eventId")) for e in events) if i is not None]
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
            event_id, moment = as_int(e.get("eventId")), event_time(e.get("eventDate"))
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
