"""The endpoint catalogue: every extracted endpoint, described once as data.

An entry names the endpoint path (also stored in `_source`), how to read it in full (a facade
method of the service client, or the generic keyset list of the path by its key field), the root
table and the nested lists that become child tables (`lake.tables`), how to fan the call out (per
accommodation type, per journal report, per arrival window), which event types refresh it and
how its records are refetched by id, and whether it is a reference list that is re-read in full
and compared when the business date moves and by the nightly sweep.

Everything else reads it: the lake asset (`pipelines.lake_assets`), the full extract, the event
plan and the landings (`assets.plan`, `assets.run`, `assets.modes`). Adding an endpoint is one
entry here plus its table in the `lake/tables_<area>.py` of its area (tests/assets/test_catalogue.py
adds a toy one). The vocabulary of an entry (`EndpointSpec`, `Section`, `ByIds`, `FanOut`) and
what the engine derives from the entries (`Catalogue`) are in `assets.endpoints`; the fan-out
functions in `assets.fanout`.
"""

from __future__ import annotations

from typing import Any

from assets import areas
from assets.areas import Area
from assets.endpoints import ByIds, Catalogue, EndpointSpec, Section
from assets.fanout import (
    after_merge_cursor,
    arrival_windows,
    is_customer_merge,
    per_accommodation_type,
    per_journal_report,
)
from assets.holders import IMPLY_HOLDERS, UNIT_IMPLIES_NOT_READ, per_holder
from lake.tables import TABLES


def _spec(
    name: str, group: str, method: str | None, source: str, description: str, **kw: Any
) -> EndpointSpec:
    return EndpointSpec(name, group, method, source, TABLES[name], description, **kw)


def _area_list(
    name: str, group: str, source: str, description: str, *, key: str, area: Area, **kw: Any
) -> EndpointSpec:
    """An optional area's list, read by the generic keyset list of its path by the wire field
    `key`, re-read in full and compared when the business date moves and by the nightly sweep."""
    kw.update(list_key=key, reference=True, optional_area=area)
    return _spec(name, group, None, source, description, **kw)


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
        "/distributionchannels/details",
        "Sales channels with their currency (every revenue figure is keyed by it), their "
        "commission and cancellation add-ons (child tables) from the details list.",
        sections=(
            Section("commissionAddons", T["distribution_channel_commissions"]),
            Section("cancellationAddons", T["distribution_channel_cancellation_addons"]),
        ),
        events=("DISTRIBUTIONCHANNEL_EVENT",),
        by_ids=ByIds(
            "/distributionchannels/details",
            "distributionChannelId",
            {"returnSections": "COMMISSION_ADDONS,CANCELLATION_ADDONS"},
        ),
        reference=True,
    ),
    _spec(
        "locations",
        "reference",
        "locations",
        "/locations",
        "Parks (locations) with their English name and visit address.",
        events=("RESORT_EVENT",),
        by_ids=ByIds("/locations", "locationId"),
        reference=True,
    ),
    _spec(
        "accommodation_types",
        "reference",
        "accommodation_types",
        "/accommodationtypes/details",
        "Accommodation types with their capacities (child table) from the details list.",
        sections=(Section("capacities", T["accommodation_type_capacities"]),),
        kwargs={"with_capacities": True},
        events=("ACCOMMODATION_TYPE_EVENT",),
        by_ids=ByIds("/accommodationtypes/details", "resourceId", {"returnSections": "CAPACITIES"}),
        reference=True,
    ),
    _spec(
        "units",
        "reference",
        "units",
        "/units",
        "Rentable units; setupDate and archivedFrom bound the nights they can be sold.",
        events=("UNIT_EVENT",),
        by_ids=ByIds("/units", "unitId"),
        reference=True,
    ),
    _spec(
        "rate_types",
        "reference",
        "rate_types",
        "/ratetypes",
        "Rate types (price lists) and the distribution channels that use them.",
        reference=True,
        optional_area=areas.RATE_TYPES,
    ),
    _spec(
        "rate_options",
        "reference",
        "rate_options",
        "/ratetypes/rateoptions",
        "Options of the rate types (per night or length of stay).",
        reference=True,
        optional_area=areas.RATE_TYPES,
    ),
    # operations: no event type in the interface; small lists re-read in full and compared
    # when the business date moves and by the nightly sweep (a removed task is tombstoned)
    _area_list(
        "operation_tasks",
        "operations",
        "/operations/tasks",
        "Operations tasks with their issue/incident and the nights they take a unit out of "
        "order (outOfOrderFrom .. outOfOrderTo, departure-style).",
        key="taskId",
        area=areas.OPERATIONS,
    ),
    _area_list(
        "periodical_tasks",
        "operations",
        "/operations/periodicalTasks",
        "Recurring operations tasks per location (never out of order by themselves).",
        key="periodicalTaskId",
        area=areas.OPERATIONS,
    ),
    # allotments: ALLOTMENT_EVENT names the accommodation type, not an allotment, so an event
    # (or a new business date, or the sweep) re-reads the small list whole and compares it
    _area_list(
        "allotments",
        "supply",
        "/allotments",
        "Allotments: units of an accommodation type held for a channel per stay period "
        "(startDate .. endDate, departure-style) until releaseDays before each night.",
        key="allotmentId",
        area=areas.ALLOTMENTS,
        events=("ALLOTMENT_EVENT",),
    ),
    # rentability and reservability: their events name the resource, so an event (or a new
    # business date, or the sweep) re-reads the small list whole
    _area_list(
        "rentability_sets",
        "supply",
        "/rentability/sets",
        "Rentability sets: allowed arrival weekdays and minimum / maximum stay of a rule.",
        key="rentabilitySetId",
        area=areas.RENTABILITY,
    ),
    _area_list(
        "rentability_config",
        "supply",
        "/rentability/config",
        "Which rentability set holds for a resource's arrivals per period (and channel).",
        key="rentabilityConfigId",
        area=areas.RENTABILITY,
        events=("RENTABILITY_EVENT",),
    ),
    _area_list(
        "resource_reservability",
        "supply",
        "/resourcereservability",
        "Whether each resource can be reserved (at all, on the internet).",
        key="reservabilityId",
        area=areas.RENTABILITY,
        events=("RESERVABILITY_EVENT",),
    ),
    _area_list(
        "addons",
        "reference",
        "/add-ons",
        "Add-ons (extras and products) with their category; prices per currency (child "
        "table). They break the EXTRA bill lines down by product and category.",
        key="resourceId",
        area=areas.ADDONS,
        sections=(Section("prices", T["addon_prices"]),),
        events=("ADDON_EVENT",),
        by_ids=ByIds("/add-ons", "resourceId"),
    ),
    _area_list(
        "owners",
        "reference",
        "/owners",
        "Owners of privately owned units (ids, country, language; no name or contact) with "
        "their contracts: unit, revenue-share percentage and period (child table).",
        key="ownerId",
        area=areas.OWNERS,
        sections=(Section("contracts", T["owner_contracts"]),),
        events=("OWNER_EVENT",),
        by_ids=ByIds("/owners", "ownerId"),
    ),
    # offers (specials): OFFER_EVENT names an offer, refetched by id with its rates (a
    # RATE_EVENT whose entityType is an offer refreshes it too, `Catalogue.entity_routes`)
    _area_list(
        "offers",
        "pricing",
        "/offers",
        "Offers (specials): the discount on the rent, who may book it and when; their rates "
        "(child table). Discount bill lines name their offer by resourceId.",
        key="resourceId",
        area=areas.OFFERS,
        sections=(Section("rates", T["offer_rates"]),),
        events=("OFFER_EVENT",),
        entity_events=(("RATE_EVENT", ("OFFER", "SPECIAL")),),
        by_ids=ByIds("/offers", "resourceId"),
    ),
    # additions: ADDITION_EVENT names the type or offer holding them, so an event (or a new
    # business date, or the sweep) re-reads both small lists whole and compares them
    _area_list(
        "accommodation_type_additions",
        "reference",
        "/accommodationtypes/additions",
        "Additions: the add-ons a guest may add to a stay of each accommodation type.",
        key="additionId",
        area=areas.ADDITIONS,
        events=("ADDITION_EVENT",),
    ),
    _area_list(
        "offer_additions",
        "pricing",
        "/offers/additions",
        "Additions of each offer: the add-ons a guest may add when booking it.",
        key="additionId",
        area=areas.ADDITIONS,
        events=("ADDITION_EVENT",),
    ),
    # implies: the interface has no list of them, only one per holder. Types, add-ons and
    # offers are few (one request each: 19 / 116 / 1,063 at small / medium / large); units are
    # not read (docs/interface-coverage.md). IMPLY_EVENT names the holder, re-read whole.
    _spec(
        "implies",
        "pricing",
        "holder_list",
        "/accommodationtypes/{resourceId}/implies",  # and the offers' and add-ons' (`holders`)
        "Implies: the add-ons every booking of an accommodation type, add-on or offer must "
        "include (mandatory costs), read per holder; unit implies are not extracted.",
        list_key="implyId",
        fan_out=per_holder(IMPLY_HOLDERS, "implyId"),
        deps=tuple(h.table for h in IMPLY_HOLDERS),
        events=("IMPLY_EVENT",),
        holders=IMPLY_HOLDERS,
        unread_holders={"UNIT": UNIT_IMPLIES_NOT_READ},
        optional_area=areas.IMPLIES,
    ),
    # finance
    _spec(
        "companies",
        "finance",
        "companies",
        "/companies",
        "Companies that own the books, with their currency and country.",
        reference=True,
        optional_area=areas.FINANCE,
    ),
    _spec(
        "journal_reports",
        "finance",
        "journal_reports",
        "/companies/journalreports",
        "Journal reports (mutation and revenue distribution) per company and period.",
        optional_area=areas.FINANCE,
    ),
    _spec(
        "journal_entries",
        "finance",
        "journal_entries",
        "/companies/journalreports/{journalReportId}/entries",
        "Ledger entries of each current journal report (child of journal_reports).",
        fan_out=per_journal_report,
        deps=("journal_reports",),
        optional_area=areas.FINANCE,
    ),
    _spec(
        "cash_accounts",
        "finance",
        "cash_accounts",
        "/cashreservations/accounts",
        "Cash registers per company and location.",
        reference=True,
        optional_area=areas.FINANCE,
    ),
    _spec(
        "cash_clearances",
        "finance",
        "cash_clearances",
        "/cashreservations/clearance",
        "Cash clearances: counted versus expected amounts per register and day.",
        optional_area=areas.FINANCE,
    ),
    # reservations (customers first: a run lands what reservations refer to before them)
    _spec(
        "customers",
        "reservations",
        "customers",
        "/customers",
        "Customers as ids and non-identifying attributes; PII only when a setting asks.",
        events=("CUSTOMER_EVENT",),
        by_ids=ByIds("/customers", "customerId", method="customers"),
        optional_area=areas.CUSTOMERS,
    ),
    _spec(
        "customer_merges",
        "reservations",
        "events",
        "/events",
        "Customer merges (old id -> surviving id) read from MERGE events of the event feed.",
        fan_out=after_merge_cursor,
        batch_kind="delta",
        record_filter=is_customer_merge,
        cursor_field="eventId",
    ),
    _spec(
        "reservations",
        "reservations",
        "reservation_details",
        "/reservations/details",
        "Reservation headers from the one details stream; children land in the same run.",
        sections=(
            Section("reservedResources", T["reserved_resources"]),
            *(Section(f, T["bill_lines"], {"payerType": p}) for f, p in BILLS),
            # the subjects under either name: ours, or the real service's (real-service-notes 4.3)
            Section("subjects", T["reservation_subjects"]),
            Section("reservationSubjects", T["reservation_subjects"]),
        ),
        events=("RESERVATION_EVENT",),
        by_ids=ByIds("/reservations/details", "reservationId", method="reservation_details"),
        columnar=True,
    ),
    # pricing
    _spec(
        "rates",
        "pricing",
        "rates",
        "/accommodationtypes/{resourceId}/rates",
        "Rates per accommodation type and rate type: OVERRIDE / ABSOLUTE / RELATIVE values "
        "with their nights, arrival, booking-date and length-of-stay windows.",
        fan_out=per_accommodation_type,
        deps=("accommodation_types",),
        events=("RATE_EVENT",),
        by_ids=ByIds("/accommodationtypes/{resourceId}/rates", "resourceId"),
        type_scoped=True,
        optional_area=areas.PRICING,
    ),
    _spec(
        "availability",
        "pricing",
        "availability",
        "/accommodationtypes/availability",
        "Remaining units and stay prices per type, arrival date and duration over the horizon.",
        sections=(Section("prices", T["availability_prices"]),),
        fan_out=arrival_windows,
        events=("AVAILABILITY_EVENT",),
        by_ids=ByIds("/accommodationtypes/availability", "resourceId"),
        type_scoped=True,
        window="arrival_date",
        optional_area=areas.PRICING,
    ),
)

CHILD_DESCRIPTIONS: dict[str, str] = {
    "accommodation_type_capacities": "Capacities of each accommodation type (child table).",
    "reserved_resources": "Reserved resources (accommodation, extras) of each reservation.",
    "bill_lines": "Bill lines of every payer (payer_type CUSTOMER, PAYING_CUSTOMER, AGENT).",
    "reservation_subjects": "Persons and pets booked on each reservation.",
    "availability_prices": "Stay price per rate type of each availability record.",
    "distribution_channel_commissions": "Commission add-ons of each channel (percentage of "
    "the agent bill's total, VAT rate, validity).",
    "distribution_channel_cancellation_addons": "Cancellation insurance add-ons of each "
    "channel (percentage of the stay, validity).",
    "addon_prices": "Prices of each add-on per currency, with validity.",
    "owner_contracts": "Contracts of each owner: unit, revenue-share percentage, period.",
    "offer_rates": "Rates of each offer: the discount per rate type and the booking window.",
}


CATALOGUE = Catalogue(SPECS)
