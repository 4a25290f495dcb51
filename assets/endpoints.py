"""The vocabulary of the endpoint catalogue (`assets.catalogue`): what an entry says about a
stream (`EndpointSpec`: its path, tables, nested sections, fan-out, events and refetch by id,
holders) and what the ingestion engine derives from a set of entries (`Catalogue`). The entries
themselves are data, in `assets.catalogue`; the engine's modules type against this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any

from assets.areas import Area, what_to_do
from lake.schema import Table
from lake.store import Lake


@dataclass(frozen=True)
class Section:
    """A nested list of a source record that lands as rows of a child table."""

    field: str
    table: Table
    constants: Mapping[str, Any] = field(default_factory=dict)  # wire field -> fixed value


@dataclass(frozen=True)
class FanOut:
    """What a fan-out function may look at: the lake (for parent ids) and the run's settings."""

    lake: Lake
    today: date | None  # the business date (the service's); only the horizon needs it
    horizon_days: int


@dataclass(frozen=True)
class ByIds:
    """How records named by events are refetched: a list path that takes the id-list filter."""

    path: str
    id_field: str  # wire field of the id list
    params: Mapping[str, Any] = field(default_factory=dict)  # other query parameters
    method: str | None = None  # facade method taking `ids=` (else the generic id-list read)


@dataclass(frozen=True)
class Holder:
    """One kind of record whose own list a holder-scoped stream reads, found by id in a lake
    table; `entity_types` are the event's spellings of the kind."""

    kind: str  # stamped on every record as holderKind (the lake key's first column)
    path: str  # with {resourceId}
    table: str  # lake table of the holders
    id_column: str
    entity_types: tuple[str, ...]


def holder_call(holder: Holder, holder_id: int, key: str) -> dict[str, Any]:
    """Facade keyword arguments reading one holder's records (`ReservationService.holder_list`)."""
    return {
        "path": holder.path,
        "key": key,
        "holder_kind": holder.kind,
        "holder_id": int(holder_id),
    }


@dataclass(frozen=True)
class EndpointSpec:
    """One stream of source records and the tables it fills."""

    name: str
    group: str
    method: str | None  # async-generator method on the service facade; None = keyset list
    source: str  # endpoint path, stored in `_source`
    table: Table
    description: str
    sections: tuple[Section, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    fan_out: Callable[[FanOut], list[dict[str, Any]]] | None = None
    deps: tuple[str, ...] = ()  # lake tables read by fan_out
    batch_kind: str = "full"  # "delta" for streams that only carry what changed
    record_filter: Callable[[dict[str, Any]], bool] | None = None
    cursor_field: str | None = None  # max value is kept in lake/_state for the next run
    list_key: str | None = None  # wire key field for the keyset list (when `method` is None)
    # Incremental refresh: event types whose entityId names a record of this stream, and how
    # those records are refetched. `type_scoped`: the entityId is an accommodation type whose
    # whole scope (all its rates, its availability) is re-read instead.
    events: tuple[str, ...] = ()
    by_ids: ByIds | None = None
    type_scoped: bool = False
    # (event type, its entityType values) that name a record of this stream although the event
    # type belongs to another (RATE_EVENT about an offer)
    entity_events: tuple[tuple[str, tuple[str, ...]], ...] = ()
    reference: bool = False  # re-read in full and compared on a new business date and nightly
    # A full read covers only the root keys whose `window` column lies within the values it read
    # (availability: the arrival dates of the horizon); the removal guard looks only there.
    window: str | None = None
    # Holder-scoped: read per holder (`holders`), keyed by the holder kind and id stamped on
    # each record; an event names the holder (entityType its kind), whose records are re-read.
    # `unread_holders`: entityType -> why that kind is deliberately not read (counted).
    holders: tuple[Holder, ...] = ()
    unread_holders: Mapping[str, str] = field(default_factory=dict)
    # The service area the marts can do without (`assets.areas`): a 403 or 404 for it lands
    # everything else and keeps the lake's records of it. None: core, a refusal fails the run.
    optional_area: Area | None = None
    # Pages read column by column into Arrow by `pyarrow.json` before the typed decoder
    # (`assets.columnar`): faster where a record carries many child items (reservation details),
    # slower for flat lists and short sections (docs/benchmarks.md, session 12).
    columnar: bool = False

    @property
    def tables(self) -> tuple[Table, ...]:
        children = {s.table.name: s.table for s in self.sections}
        return (self.table, *children.values())

    def holder(self, entity_type: Any) -> Holder | None:
        """The holder an event's entityType names (None: not one this stream reads)."""
        text = str(entity_type or "").upper()
        return next((h for h in self.holders if text in h.entity_types), None)

    def holder_calls(self, holders: Iterable[tuple[str, int]]) -> list[dict[str, Any]]:
        """Facade keyword arguments reading the given (kind, id) holders."""
        by_kind = {h.kind: h for h in self.holders}
        key = self.list_key or ""
        return [holder_call(by_kind[k], i, key) for k, i in sorted(holders)]


def refused_area(spec: EndpointSpec, status: int | None) -> tuple[str, bool, str] | None:
    """(area, optional, what to ask for) when the service refused this stream's area with
    `status` (403: no permission; 404 on its list: no module); None for another status. A core
    stream's area is named by its path."""
    if status not in (403, 404):
        return None
    if spec.optional_area is not None:
        name, optional = spec.optional_area.name, True
    else:
        name, optional = spec.source.strip("/").split("/", 1)[0], False
    return name, optional, what_to_do(name, status)


@dataclass(frozen=True)
class Catalogue:
    """The entries, and what the ingestion engine derives from them (nothing restated)."""

    specs: tuple[EndpointSpec, ...]

    @cached_property
    def by_name(self) -> dict[str, EndpointSpec]:
        return {s.name: s for s in self.specs}

    @cached_property
    def event_streams(self) -> dict[str, str]:
        """Event type -> the stream it refreshes."""
        return {event: s.name for s in self.specs for event in s.events}

    @cached_property
    def reference_lists(self) -> tuple[str, ...]:
        """Streams re-read in full and compared (new business date, nightly sweep)."""
        return tuple(s.name for s in self.specs if s.reference)

    @cached_property
    def relisted_by_events(self) -> tuple[str, ...]:
        """Reference lists whose events name a scope rather than a record (no `by_ids`): an
        event re-reads the whole list, compared with the lake (removed records drop out)."""
        return tuple(s.name for s in self.specs if s.reference and s.events and not s.by_ids)

    @cached_property
    def relisted_on(self) -> dict[str, tuple[str, ...]]:
        """Event type -> every list it re-reads (ADDITION_EVENT: the additions of types and of
        offers, since its entityId may name either)."""
        out: dict[str, tuple[str, ...]] = {}
        for name in self.relisted_by_events:
            for event in self.by_name[name].events:
                out[event] = (*out.get(event, ()), name)
        return out

    @cached_property
    def entity_routes(self) -> dict[tuple[str, str], str]:
        """(event type, entityType) -> the stream it refreshes instead of the event type's."""
        return {
            (event, kind): s.name
            for s in self.specs
            for event, kinds in s.entity_events
            for kind in kinds
        }

    @cached_property
    def holder_scoped(self) -> tuple[str, ...]:
        """Streams read per holder (`EndpointSpec.holders`), in catalogue order."""
        return tuple(s.name for s in self.specs if s.holders)

    @cached_property
    def keyed(self) -> tuple[str, ...]:
        """Streams refetched by the ids their events name, in catalogue order."""
        return tuple(s.name for s in self.specs if s.by_ids and not s.type_scoped)

    def tables_of(self, name: str) -> tuple[str, ...]:
        return tuple(t.name for t in self.by_name[name].tables)

    def with_entries(self, *specs: EndpointSpec) -> Catalogue:
        """This catalogue with more entries (an extension, or a test's toy endpoint)."""
        return Catalogue((*self.specs, *specs))
