"""The lake's tables as data: columns (wire field, type, rules), keys and parents.

One explicit schema per table (docs/contracts.md section 3) drives normalisation, the Parquet
schema, the Dagster column schema and the current-state rule, so they cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

MONEY = pa.decimal128(18, 2)
TIMESTAMP = pa.timestamp("ms", tz="UTC")

# kind -> Arrow type. "translation" picks the `en` name out of a translations list.
ARROW_TYPES: dict[str, pa.DataType] = {
    "id": pa.int64(),
    "int": pa.int64(),
    "float": pa.float64(),
    "money": MONEY,
    "date": pa.date32(),
    "datetime": TIMESTAMP,
    "str": pa.string(),
    "bool": pa.bool_(),
    "int_list": pa.list_(pa.int64()),
    "str_list": pa.list_(pa.string()),
    "translation": pa.string(),
}

LINEAGE: tuple[pa.Field, ...] = (
    pa.field("_batch_id", pa.string(), nullable=False),
    pa.field("_batch_kind", pa.string(), nullable=False),
    pa.field("_extracted_at", TIMESTAMP, nullable=False),
    pa.field("_source", pa.string(), nullable=False),
    pa.field("_is_deleted", pa.bool_(), nullable=False),
    pa.field("_extra", pa.string()),
)

QUARANTINE_SCHEMA = pa.schema(
    [
        pa.field("_batch_id", pa.string()),
        pa.field("_extracted_at", TIMESTAMP),
        pa.field("_source", pa.string()),
        pa.field("table", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("record", pa.string()),
    ]
)

# Reservation status codes the real service documents (real-service-notes 4.2).
RATE_STATUSES = (0, 1)  # inactive, active (docs/contracts.md: status 1 = active)
RESERVATION_STATUSES = (-99, -13, -12, -11, -10, -5, 0, 10, 11, 12, 21, 31, 41)
# Bill line types (real-service-notes 4.4).
BILL_LINE_TYPES = (10, 20, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 180, 190, 250, 260)
PAYER_TYPES = ("CUSTOMER", "PAYING_CUSTOMER", "AGENT")

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """`nrOfBedrooms` -> `nr_of_bedrooms`, `visitAddress.city` -> `visit_address_city`."""
    return "_".join(_CAMEL.sub("_", part).lower() for part in name.split("."))


@dataclass(frozen=True)
class Column:
    """One lake column: where it comes from on the wire, its kind and its rules."""

    source: str  # wire field, dotted for a nested object ("visitAddress.city")
    kind: str
    required: bool = False
    codes: tuple[object, ...] | None = None  # allowed values; anything else is quarantined
    pii: bool = False  # lands only when include_customer_pii is set
    name: str = ""  # lake column; snake_case of `source` unless given

    @property
    def column(self) -> str:
        if self.name:
            return self.name
        return "name" if self.kind == "translation" else snake(self.source)

    @property
    def arrow_type(self) -> pa.DataType:
        return ARROW_TYPES[self.kind]


def col(source: str, kind: str = "str", **kw: object) -> Column:
    return Column(source, kind, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Table:
    """A lake table. Child tables name their parent and the columns linking to its key."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    parent: str | None = None
    parent_key: dict[str, str] = field(default_factory=dict)  # child column -> parent key
    ignored: tuple[str, ...] = ()  # wire fields known and deliberately not landed

    def landed(self, include_pii: bool) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if include_pii or not c.pii)

    def arrow_schema(self, include_pii: bool = False) -> pa.Schema:
        fields = [pa.field(c.column, c.arrow_type) for c in self.landed(include_pii)]
        return pa.schema([*fields, *LINEAGE])

    def known_fields(self) -> frozenset[str]:
        """Top-level wire fields this table understands (landed, PII or ignored)."""
        return frozenset(c.source.split(".")[0] for c in self.columns) | frozenset(self.ignored)


def _id(source: str, **kw: object) -> Column:
    return col(source, "id", **kw)


TABLES: dict[str, Table] = {}


def _table(name: str, key: tuple[str, ...], *columns: Column, **kw: object) -> Table:
    table = Table(name, tuple(columns), key, **kw)  # type: ignore[arg-type]
    TABLES[name] = table
    return table


_table(
    "distribution_channels",
    ("distribution_channel_id",),
    _id("distributionChannelId", required=True),
    col("code", required=True),
    col("name"),
    col("type"),
    _id("parentId"),
    _id("currencyId"),
    col("currencyCode", required=True),
    col("commissionPercentage", "float"),
    col("activeStartDate", "date"),
    col("activeEndDate", "date"),
    col("archivedFrom", "date"),
    col("allotmentOnly", "bool"),
)
_table(
    "locations",
    ("location_id",),
    _id("locationId", required=True),
    col("code"),
    col("locationNumber", "int"),
    _id("parentId"),
    _id("adminOrganisationId"),
    _id("companyId"),
    col("bookableLocation", "bool"),
    col("archivedFrom", "date"),
    col("minAgeForBooking", "int"),
    col("translations", "translation"),
    col("visitAddress.address1"),
    col("visitAddress.zipCode"),
    col("visitAddress.city"),
    col("visitAddress.countryCode"),
)
_table(
    "accommodation_types",
    ("resource_id",),
    _id("resourceId", required=True),
    col("code"),
    _id("locationId", required=True),
    _id("accotypeKindId"),
    col("kindCode"),
    col("type"),
    col("nrOfBedrooms", "int"),
    col("nrOfBathrooms", "float"),
    col("numberOfPersons", "int"),
    col("hasObjects", "bool"),
    col("priority", "int"),
    col("checkinTime"),
    col("checkoutTime"),
    col("archivedFrom", "date"),
    col("translations", "translation"),
    ignored=("capacities",),
)
_table(
    "accommodation_type_capacities",
    ("capacity_id", "resource_id"),
    _id("capacityId", required=True),
    _id("resourceId", required=True),
    col("capacity", "int"),
    _id("subjectId"),
    col("startDate", "date"),
    col("endDate", "date"),
    col("name"),
    parent="accommodation_types",
    parent_key={"resource_id": "resource_id"},
)
_table(
    "units",
    ("unit_id",),
    _id("unitId", required=True),
    _id("resourceId", required=True),
    col("code"),
    col("roomCode"),
    col("nrOfBedrooms", "int"),
    col("nrOfBathrooms", "float"),
    col("choosableOnInternet", "bool"),
    col("cleaningStatus"),
    col("setupDate", "date"),
    col("archivedFrom", "date"),
    col("translations", "translation"),
)
_table(
    "rate_types",
    ("rate_type_id",),
    _id("rateTypeId", required=True),
    col("code"),
    col("name"),
    col("currencyCode"),
    col("distributionChannelIds", "int_list"),
    col("priority", "int"),
)
_table(
    "rate_options",
    ("rate_option_id",),
    _id("rateOptionId", required=True),
    _id("rateTypeId", required=True),
    col("code"),
    col("name"),
    col("optionType"),
)
_table(
    "rates",
    ("rate_id",),
    _id("rateId", required=True),
    _id("resourceId", required=True),
    _id("rateTypeId"),
    col("rateTypeIds", "int_list"),
    _id("rateOptionId"),
    col("value", "money", required=True),
    col("quantifier"),
    col("valueType"),
    col("priority", "int"),
    col("validFrom", "date", required=True),
    col("validTo", "date", required=True),
    col("bookdateFrom", "date"),
    col("bookdateTo", "date"),
    col("minDuration", "int"),
    col("maxDuration", "int"),
    col("applicableDays", "str_list"),
    col("status", "int", codes=RATE_STATUSES),
)
_table(
    "availability",
    ("resource_id", "arrival_date", "duration"),
    _id("resourceId", required=True),
    col("arrivalDate", "date", required=True),
    col("duration", "int", required=True),
    _id("accommodationKindId"),
    _id("locationId"),
    col("locationCode"),
    col("departureDate", "date"),
    col("availableUnits", "int"),
    col("units", "int_list"),
    col("maxCapacity", "int"),
    col("petCapacity", "int"),
    ignored=("prices",),
)
_table(
    "availability_prices",
    ("resource_id", "arrival_date", "duration", "rate_type_id"),
    _id("resourceId", required=True),
    col("arrivalDate", "date", required=True),
    col("duration", "int", required=True),
    _id("rateTypeId", required=True),
    col("currencyCode"),
    col("price", "money"),
    parent="availability",
    parent_key={
        "resource_id": "resource_id",
        "arrival_date": "arrival_date",
        "duration": "duration",
    },
)
_table(
    "companies",
    ("company_id",),
    _id("companyId", required=True),
    col("code"),
    col("name"),
    _id("adminOrganisationId"),
    col("currencyCode"),
    col("countryCode"),
)
_table(
    "journal_reports",
    ("journal_report_id",),
    _id("journalReportId", required=True),
    _id("companyId"),
    col("reportNumber", "int"),
    col("type"),
    col("periodFrom", "date"),
    col("periodTo", "date"),
    col("createdDate", "datetime"),
    col("currencyCode"),
)
_table(
    "journal_entries",
    ("journal_entry_id",),
    _id("journalEntryId", required=True),
    _id("reportId", required=True),
    col("type"),
    col("reportNumber", "int"),
    col("mutationDate", "date", required=True),
    _id("reservationId"),
    col("reservationNumber"),
    _id("locationId"),
    col("resourceCode"),
    col("ledgerNumber"),
    col("secondLedgerNumber"),
    col("costCenter"),
    col("debitVatIncluded", "money"),
    col("creditVatIncluded", "money"),
    col("debitVatExcluded", "money"),
    col("creditVatExcluded", "money"),
    _id("customerId"),
    _id("distributionChannelId"),
    _id("reservedResourceId"),
    col("comments"),
    parent="journal_reports",
    parent_key={"report_id": "journal_report_id"},
)
_table(
    "cash_accounts",
    ("cash_account_id",),
    _id("cashAccountId", required=True),
    _id("companyId"),
    _id("locationId"),
    col("code"),
    col("name"),
    col("currencyCode"),
)
_table(
    "cash_clearances",
    ("cash_clearance_id",),
    _id("cashClearanceId", required=True),
    _id("cashAccountId", required=True),
    col("clearanceNumber", "int"),
    col("clearanceDate", "date"),
    col("clearedAt", "datetime"),
    col("startBalance", "money"),
    col("expectedAmount", "money"),
    col("countedCash", "money"),
    col("countedCard", "money"),
    col("countedCheque", "money"),
    col("countedAncv", "money"),
    col("difference", "money"),
    col("differenceReason"),
    col("startBalanceNextDay", "money"),
    _id("employeeId"),
)
_table(
    "customers",
    ("customer_id",),
    _id("customerId", required=True),
    col("countryCode"),
    col("language"),
    col("birthYear", "int"),
    col("loyaltyLevel"),
    col("createdDate", "datetime"),
    col("modifiedDate", "datetime"),
    col("firstName", pii=True),
    col("middleName", pii=True),
    col("lastName", pii=True),
    col("email", pii=True),
    col("phone", pii=True),
    col("address.address1", pii=True),
    col("address.zipCode", pii=True),
    col("address.city", pii=True),
    col("address.countryCode", pii=True),
)
_table(
    "customer_merges",
    ("old_customer_id",),
    _id("oldEntityId", required=True, name="old_customer_id"),
    _id("entityId", required=True, name="customer_id"),
    col("eventDate", "datetime", name="merged_at"),
    _id("eventId"),
    ignored=("eventType", "entityType", "entityAction"),
)
_table(
    "reservations",
    ("reservation_id",),
    _id("reservationId", required=True),
    col("reservationNumber"),
    _id("reservationCategoryId"),
    col("categoryCode"),
    col("categoryName"),
    col("type"),
    col("status", "int", required=True, codes=RESERVATION_STATUSES),
    col("arrivalDate", "date", required=True),
    col("departureDate", "date", required=True),
    col("expectedArrivalDateTime", "datetime"),
    col("expectedDepartureDateTime", "datetime"),
    _id("customerId"),
    _id("distributionChannelId", required=True),
    col("distributionChannelCode"),
    _id("locationId"),
    col("reservationDate", "datetime"),
    col("modifiedDate", "datetime"),
    col("cancelDate", "datetime"),
    col("voucher"),
    col("validationStatus", "int"),
    # The sections arrive in the same record and become child tables; the embedded customer
    # objects of the real service are PII and never land from here.
    ignored=(
        "reservedResources",
        "customerBill",
        "payingCustomerBill",
        "agentBill",
        "subjects",
        "customer",
        "payingCustomer",
    ),
)
_table(
    "reserved_resources",
    ("reserved_resource_id",),
    _id("reservedResourceId", required=True),
    _id("reservationId", required=True),
    _id("resourceId"),
    _id("unitId"),
    _id("rateTypeId"),
    col("type"),
    col("code"),
    col("name"),
    col("quantity", "int"),
    col("startDate", "date"),
    col("endDate", "date"),
    col("statusName"),
    col("overrideValue", "money"),
    parent="reservations",
    parent_key={"reservation_id": "reservation_id"},
)
_table(
    "bill_lines",
    ("reservation_bill_line_id",),
    _id("reservationBillLineId", required=True),
    _id("reservationBillId"),
    _id("reservationId", required=True),
    col("payerType", required=True, codes=PAYER_TYPES),
    col("billLineType", "int", required=True, codes=BILL_LINE_TYPES),
    _id("resourceId"),
    col("resourceType"),
    _id("reservedResourceId"),
    _id("rateId"),
    _id("rateTypeId"),
    col("description"),
    col("quantity", "int"),
    col("multiplier", "int"),
    col("value", "money"),
    col("total", "money", required=True),
    col("vatRate", "float"),
    col("startDate", "date"),
    col("endDate", "date"),
    parent="reservations",
    parent_key={"reservation_id": "reservation_id"},
)
_table(
    "reservation_subjects",
    ("reservation_subject_id",),
    _id("reservationSubjectId", required=True),
    _id("reservationId", required=True),
    _id("subjectId"),
    col("type"),
    col("ageFrom", "int"),
    col("ageTo", "int"),
    col("quantity", "int"),
    parent="reservations",
    parent_key={"reservation_id": "reservation_id"},
)
