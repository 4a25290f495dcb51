"""The lake's tables as data: every table's columns (wire field, type, rules), key and parent.

Adding an endpoint is one entry in `assets.catalogue` plus its table here; the table drives
normalisation, the Parquet schema, the Dagster column schema, the warehouse's typed views and the
current-state rule (docs/contracts.md section 3).

`required=True` (a null or absent value quarantines the record) is kept for what identifies a
row: the key columns and the link to the parent. real-service-notes.md never says that any other
field is always present, so every other column is nullable: a record that lacks an optional field
lands with a null there (the strict sandbox leaves such fields out at random). The one exception
is `customer_merges.customer_id`: a MERGE event carries the surviving customer in `entityId`
(interface, "Events"), and a merge without it means nothing.
"""

from __future__ import annotations

from lake.schema import (
    BILL_LINE_TYPES,
    PAYER_TYPES,
    RATE_QUANTIFIERS,
    RATE_STATUSES,
    RESERVATION_STATUSES,
    Column,
    Table,
    col,
)
from lake.tables_offers import OFFER_TABLES
from lake.tables_supply import SUPPLY_TABLES


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
    col("code"),
    col("name"),
    col("type"),
    _id("parentId"),
    _id("currencyId"),
    col("currencyCode"),
    col("commissionPercentage", "float"),
    col("activeStartDate", "date"),
    col("activeEndDate", "date"),
    col("archivedFrom", "date"),
    col("allotmentOnly", "bool"),
    ignored=("commissionAddons", "cancellationAddons"),  # child tables below
)
_table(
    "distribution_channel_commissions",
    ("commission_addon_id",),
    _id("commissionAddonId", required=True),
    _id("distributionChannelId", required=True),
    col("name"),
    col("percentage", "float"),
    col("calculationBase"),
    col("vatRate", "float"),
    col("validFrom", "date"),
    col("validTo", "date"),
    parent="distribution_channels",
    parent_key={"distribution_channel_id": "distribution_channel_id"},
)
_table(
    "distribution_channel_cancellation_addons",
    ("cancellation_addon_id",),
    _id("cancellationAddonId", required=True),
    _id("distributionChannelId", required=True),
    _id("resourceId"),
    col("name"),
    col("percentage", "float"),
    col("validFrom", "date"),
    col("validTo", "date"),
    parent="distribution_channels",
    parent_key={"distribution_channel_id": "distribution_channel_id"},
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
    _id("locationId"),
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
    _id("resourceId"),
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
    _id("rateTypeId"),
    col("code"),
    col("name"),
    col("optionType"),
)
_table(
    "rates",
    ("rate_id",),
    _id("rateId", required=True),
    _id("resourceId"),
    _id("rateTypeId"),
    col("rateTypeIds", "int_list"),
    _id("rateOptionId"),
    col("value", "money"),
    col("quantifier", codes=RATE_QUANTIFIERS),
    col("valueType"),
    col("priority", "int"),
    # the arrival-date window; write-only on the real service, so a read may leave it out
    col("validFrom", "date"),
    col("validTo", "date"),
    col("usageDurationFrom", "date"),  # the window of the nights priced
    col("usageDurationTo", "date"),
    col("bookdateFrom", "date"),
    col("bookdateTo", "date"),
    col("minDuration", "int"),
    col("maxDuration", "int"),
    col("applicableDays", "str_list"),
    col("status", "int", codes=RATE_STATUSES),
    col("remark"),  # free text (real-service-notes, the rate model); landed, not interpreted
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
    col("mutationDate", "date"),
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
    _id("cashAccountId"),
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
    col("birthYear", "int", pii=True),  # identifying with country and language: PII
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
    col("status", "int", codes=RESERVATION_STATUSES),
    col("arrivalDate", "date"),
    col("departureDate", "date"),
    col("expectedArrivalDateTime", "datetime"),
    col("expectedDepartureDateTime", "datetime"),
    _id("customerId"),
    _id("distributionChannelId"),
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
        "reservationSubjects",  # the real service's name of the subjects section
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
    col("payerType", codes=PAYER_TYPES),  # set by the section it arrives in
    col("billLineType", "int", codes=BILL_LINE_TYPES),
    _id("resourceId"),
    col("resourceType"),
    _id("reservedResourceId"),
    _id("rateId"),
    _id("rateTypeId"),
    col("description"),
    col("quantity", "int"),
    col("multiplier", "int"),
    col("value", "money"),
    col("total", "money"),
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

# The supply areas (operations, allotments, rentability) are described in `lake.tables_supply`.
for _supply in SUPPLY_TABLES:
    TABLES[_supply.name] = _supply
_table(
    "addons",
    ("resource_id",),
    _id("resourceId", required=True),
    col("code"),
    col("name"),
    col("type"),
    _id("addonCategoryId"),
    col("categoryCode"),
    col("categoryName"),
    col("priceType"),
    col("vatRate", "float"),
    col("choosableOnInternet", "bool"),
    col("description"),
    col("archivedFrom", "date"),
    ignored=("prices",),
)
_table(
    "addon_prices",
    ("addon_price_id",),
    _id("addonPriceId", required=True),
    _id("resourceId", required=True),
    col("currencyCode"),
    col("price", "money"),
    col("validFrom", "date"),
    col("validTo", "date"),
    parent="addons",
    parent_key={"resource_id": "resource_id"},
)
_table(
    "owners",
    ("owner_id",),
    _id("ownerId", required=True),
    col("code"),
    col("countryCode"),
    col("language"),
    col("createdDate", "datetime"),
    col("modifiedDate", "datetime"),
    # an owner is a private person: name, contact and address never land (not even with PII
    # allowed: nothing downstream needs them); the contracts become their own table
    ignored=("firstName", "lastName", "email", "phone", "address", "contracts"),
)
_table(
    "owner_contracts",
    ("contract_id",),
    _id("contractId", required=True),
    _id("ownerId", required=True),
    _id("unitId"),
    _id("resourceId"),
    col("contractType"),
    col("shareBasis"),
    col("revenueSharePercentage", "float"),
    col("startDate", "date"),
    col("endDate", "date"),
    parent="owners",
    parent_key={"owner_id": "owner_id"},
)

# Offers with their rates and the additions of types and offers: `lake.tables_offers`.
for _offer_table in OFFER_TABLES:
    TABLES[_offer_table.name] = _offer_table
