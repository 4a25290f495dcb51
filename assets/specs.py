"""Every extracted endpoint, described once as data; `pipelines.lake_assets` turns them into assets.

A spec names the facade method of the service client, the endpoint path (for `_source`), the
root table, the nested lists that become child tables, and how to fan the call out (per
accommodation type, per journal report, per arrival window). Adding an endpoint is adding a spec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from lake.schema import Table
from lake.store import Lake
from lake.tables import TABLES

AVAILABILITY_WINDOW_DAYS = 31  # the availability endpoint refuses more arrival dates per call


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
    today: date
    horizon_days: int


@dataclass(frozen=True)
class EndpointSpec:
    """One stream of source records and the tables it fills."""

    name: str
    group: str
    method: str  # async-generator method on the service facade, yielding pages
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

    @property
    def tables(self) -> tuple[Table, ...]:
        children = {s.table.name: s.table for s in self.sections}
        return (self.table, *children.values())


def _per_accommodation_type(ctx: FanOut) -> list[dict[str, Any]]:
    return [{"resource_id": i} for i in ctx.lake.current_ids("accommodation_types", "resource_id")]


def _per_journal_report(ctx: FanOut) -> list[dict[str, Any]]:
    ids = ctx.lake.current_ids("journal_reports", "journal_report_id")
    return [{"report_id": i} for i in ids]


def _arrival_windows(ctx: FanOut) -> list[dict[str, Any]]:
    """The horizon in windows of at most 31 arrival dates (the endpoint's limit)."""
    calls = []
    start, end = ctx.today, ctx.today + timedelta(days=max(ctx.horizon_days, 1) - 1)
    while start <= end:
        stop = min(start + timedelta(days=AVAILABILITY_WINDOW_DAYS - 1), end)
        calls.append({"arrival_from": start, "arrival_to": stop})
        start = stop + timedelta(days=1)
    return calls


def _after_cursor(ctx: FanOut) -> list[dict[str, Any]]:
    state = ctx.lake.read_state("cursor_customer_merges") or {}
    return [{"after_event_id": int(state.get("cursor") or 0)}]


def _is_customer_merge(event: dict[str, Any]) -> bool:
    return event.get("entityAction") == "MERGE" and event.get("eventType") == "CUSTOMER_EVENT"


def _spec(
    name: str, group: str, method: str, source: str, description: str, **kw: Any
) -> EndpointSpec:
    return EndpointSpec(name, group, method, source, TABLES[name], description, **kw)


T = TABLES
BILLS = (
    ("customerBill", "CUSTOMER"),
    ("payingCustomerBill", "PAYING_CUSTOMER"),
    ("agentBill", "AGENT"),
)

SPECS: tuple[EndpointSpec, ...] = (
    # reference
    _spec(
        "distribution_channels",
        "reference",
        "distribution_channels",
        "/distributionchannels",
        "Sales channels with their currency; every revenue figure is keyed by it.",
    ),
    _spec(
        "locations",
        "reference",
        "locations",
        "/locations",
        "Parks (locations) with their English name and visit address.",
    ),
    _spec(
        "accommodation_types",
        "reference",
        "accommodation_types",
        "/accommodationtypes/details",
        "Accommodation types with their capacities (child table) from the details list.",
        sections=(Section("capacities", T["accommodation_type_capacities"]),),
        kwargs={"with_capacities": True},
    ),
    _spec(
        "units",
        "reference",
        "units",
        "/units",
        "Rentable units; setupDate and archivedFrom bound the nights they can be sold.",
    ),
    _spec(
        "rate_types",
        "reference",
        "rate_types",
        "/ratetypes",
        "Rate types (price lists) and the distribution channels that use them.",
    ),
    _spec(
        "rate_options",
        "reference",
        "rate_options",
        "/ratetypes/rateoptions",
        "Options of the rate types (per night or length of stay).",
    ),
    # finance
    _spec(
        "companies",
        "finance",
        "companies",
        "/companies",
        "Companies that own the books, with their currency and country.",
    ),
    _spec(
        "journal_reports",
        "finance",
        "journal_reports",
        "/companies/journalreports",
        "Journal reports (mutation and revenue distribution) per company and period.",
    ),
    _spec(
        "journal_entries",
        "finance",
        "journal_entries",
        "/companies/journalreports/{journalReportId}/entries",
        "Ledger entries of each current journal report (child of journal_reports).",
        fan_out=_per_journal_report,
        deps=("journal_reports",),
    ),
    _spec(
        "cash_accounts",
        "finance",
        "cash_accounts",
        "/cashreservations/accounts",
        "Cash registers per company and location.",
    ),
    _spec(
        "cash_clearances",
        "finance",
        "cash_clearances",
        "/cashreservations/clearance",
        "Cash clearances: counted versus expected amounts per register and day.",
    ),
    # reservations
    _spec(
        "reservations",
        "reservations",
        "reservation_details",
        "/reservations/details",
        "Reservation headers from the one details stream; children land in the same run.",
        sections=(
            Section("reservedResources", T["reserved_resources"]),
            *(Section(f, T["bill_lines"], {"payerType": p}) for f, p in BILLS),
            Section("subjects", T["reservation_subjects"]),
        ),
    ),
    _spec(
        "customers",
        "reservations",
        "customers",
        "/customers",
        "Customers as ids and non-identifying attributes; PII only when a setting asks.",
    ),
    _spec(
        "customer_merges",
        "reservations",
        "events",
        "/events",
        "Customer merges (old id -> surviving id) read from MERGE events of the event feed.",
        fan_out=_after_cursor,
        batch_kind="delta",
        record_filter=_is_customer_merge,
        cursor_field="eventId",
    ),
    # pricing
    _spec(
        "rates",
        "pricing",
        "rates",
        "/accommodationtypes/{resourceId}/rates",
        "Nightly list prices per accommodation type and rate type.",
        fan_out=_per_accommodation_type,
        deps=("accommodation_types",),
    ),
    _spec(
        "availability",
        "pricing",
        "availability",
        "/accommodationtypes/availability",
        "Remaining units and stay prices per type, arrival date and duration over the horizon.",
        sections=(Section("prices", T["availability_prices"]),),
        fan_out=_arrival_windows,
    ),
)

CHILD_DESCRIPTIONS: dict[str, str] = {
    "accommodation_type_capacities": "Capacities of each accommodation type (child table).",
    "reserved_resources": "Reserved resources (accommodation, extras) of each reservation.",
    "bill_lines": "Bill lines of every payer (payer_type CUSTOMER, PAYING_CUSTOMER, AGENT).",
    "reservation_subjects": "Persons and pets booked on each reservation.",
    "availability_prices": "Stay price per rate type of each availability record.",
}


def specs_for(group: str) -> tuple[EndpointSpec, ...]:
    return tuple(s for s in SPECS if s.group == group)
