"""What every lake column means, for the people who read the lake: Dagster's column schema of
each lake asset, the warehouse's staging comments (`warehouse.dictionary_staging`) and the
catalogue page all take their text from here.

A column is described by its table's entry, else by the meaning its name has in every table
(`SHARED`); coded columns list their codes with the names the real service documents
(`lake.schema`), so `status` says which number is CANCELLED. The commercial areas' entries
(commissions, add-ons, owners) live in `lake.column_docs_commercial`, the offers' and
additions' in `lake.column_docs_offers`. `tests/warehouse/
test_catalog.py` fails on a lake column without a description.
"""

from __future__ import annotations

from lake.column_docs_commercial import COMMERCIAL_ENTITIES, COMMERCIAL_TABLES
from lake.column_docs_offers import OFFER_ENTITIES, OFFER_TABLES
from lake.schema import CODE_NAMES, Column, Table

LINEAGE: dict[str, str] = {
    "_batch_id": "The landing batch that wrote the row (one per run and table).",
    "_batch_kind": "full (the batch holds every current record of the table: keys it lacks are "
    "gone) or delta (the batch holds only the records that changed).",
    "_extracted_at": "When the page holding the record was read from the service (UTC).",
    "_source": "The service endpoint path the record came from.",
    "_is_deleted": "True for a tombstone: the record was deleted at the service.",
    "_extra": "Fields the service sent that the lake does not know, as JSON (null when none).",
}

SHARED: dict[str, str] = {
    "admin_organisation_id": "Admin organisation (the tenant's legal umbrella) it belongs to.",
    "archived_from": "Date it is archived from (null while active); archived records are not "
    "offered for sale from that day.",
    "arrival_date": "Arrival date (first night of the stay).",
    "cash_account_id": "Cash account (cash register) of the clearance.",
    "code": "Short code of the {entity}.",
    "company_id": "Company (legal entity) it belongs to.",
    "country_code": "ISO country code.",
    "created_date": "When the service created it (UTC).",
    "currency_code": "ISO currency code of its amounts.",
    "customer_id": "Customer (guest) id.",
    "departure_date": "Departure date (the morning after the last night).",
    "distribution_channel_id": "Distribution channel (sales channel) id.",
    "duration": "Length of stay in nights.",
    "end_date": "Last date of its period (inclusive).",
    "location_id": "Location (park) id.",
    "modified_date": "When the service last modified it (UTC).",
    "name": "Name of the {entity} (English where the service gives translations).",
    "nr_of_bathrooms": "Number of bathrooms.",
    "nr_of_bedrooms": "Number of bedrooms.",
    "parent_id": "Parent in the service's hierarchy (null at the top).",
    "priority": "Priority as the service orders it.",
    "quantity": "How many.",
    "rate_id": "Rate (price rule) id.",
    "rate_option_id": "Rate option (per-night or length-of-stay pricing) id.",
    "rate_type_id": "Rate type (price list) id.",
    "report_number": "Number of the journal report.",
    "reservation_id": "Reservation id.",
    "reservation_number": "Reservation number as the service shows it to people (a string).",
    "reserved_resource_id": "Reserved resource (line of a reservation's content) id.",
    "resource_id": "Resource id: an accommodation type, or an add-on / extra.",
    "start_date": "First date of its period (inclusive).",
    "subject_id": "Subject (person category, pet, vehicle...) id.",
    "type": "Type as the service names it.",
    "unit_id": "Unit (the physical rentable object) id.",
    "value": "Amount (DECIMAL(18,2)).",
}

# what one row of a table is, for the shared texts ("Short code of the {entity}.")
ENTITIES: dict[str, str] = {
    "distribution_channels": "distribution channel",
    "locations": "location (park)",
    "accommodation_types": "accommodation type",
    "accommodation_type_capacities": "capacity",
    "units": "unit",
    "rate_types": "rate type",
    "rate_options": "rate option",
    "companies": "company",
    "cash_accounts": "cash account",
    "reserved_resources": "reserved resource (as the service names it)",
    **COMMERCIAL_ENTITIES,
    **OFFER_ENTITIES,
}

TABLES: dict[str, dict[str, str]] = {
    "distribution_channels": {
        "distribution_channel_id": "Distribution channel id (key).",
        "type": "DIRECT, RESELLER or TOUROPERATOR.",
        "currency_id": "Currency id of the channel: its reservations are billed in it.",
        "currency_code": "ISO currency code of the channel; the currency of its reservations' "
        "bill lines (they carry none).",
        "commission_percentage": "Commission percentage the channel earns.",
        "active_start_date": "First day the channel sells.",
        "active_end_date": "Last day the channel sells.",
        "allotment_only": "True when the channel sells only from allotments.",
    },
    "locations": {
        "location_id": "Location (park) id (key).",
        "location_number": "Location number.",
        "bookable_location": "False for a node of the hierarchy that cannot be booked.",
        "min_age_for_booking": "Minimum age of the person who books.",
        "visit_address_address1": "Street address of the park.",
        "visit_address_zip_code": "Postal code of the park.",
        "visit_address_city": "City of the park.",
        "visit_address_country_code": "ISO country code of the park.",
    },
    "accommodation_types": {
        "resource_id": "Accommodation type id (key; the service's resourceId).",
        "location_id": "Location (park) it is offered in.",
        "accotype_kind_id": "Accommodation kind (bungalow, tent, ...) id.",
        "kind_code": "Code of the accommodation kind.",
        "type": "Resource type: ACCOMMODATIONTYPE, RESOURCEACTIVITY, ACTIVITY, PRODUCTTYPE, "
        "EXTRA, SPECIAL or COMPOSITION.",
        "number_of_persons": "Number of persons it sleeps.",
        "has_objects": "True when it has units (physical objects).",
        "checkin_time": "Check-in time of day (HH:mm:ss).",
        "checkout_time": "Check-out time of day (HH:mm:ss).",
    },
    "accommodation_type_capacities": {
        "capacity_id": "Capacity id (key with resource_id).",
        "resource_id": "Accommodation type it limits (parent key).",
        "capacity": "How many of the subject the accommodation type takes.",
        "subject_id": "Subject (person category, pet...) the capacity counts.",
        "start_date": "First day the capacity applies.",
        "end_date": "Last day the capacity applies.",
        "name": "Name of the capacity.",
    },
    "units": {
        "unit_id": "Unit id (key).",
        "resource_id": "Accommodation type of the unit.",
        "room_code": "Room code.",
        "choosable_on_internet": "True when a guest may pick this unit online.",
        "cleaning_status": "CLEAN, TO_BE_CLEANED, IN_PROGRESS, CHECKED, POSTPONED, "
        "OCCUPIED_CLEAN or TOUCH_UP.",
        "setup_date": "First night the unit exists (supply counts from it).",
        "archived_from": "Night the unit leaves supply (null while in use).",
    },
    "rate_types": {
        "rate_type_id": "Rate type (price list) id (key).",
        "currency_code": "Currency of the rate type's prices.",
        "distribution_channel_ids": "Distribution channels that sell this rate type.",
    },
    "rate_options": {
        "rate_option_id": "Rate option id (key).",
        "rate_type_id": "Rate type the option belongs to.",
        "option_type": "How the option prices: per night or per length of stay.",
    },
    "rates": {
        "rate_id": "Rate id (key).",
        "resource_id": "Accommodation type the rate prices.",
        "rate_type_id": "Rate type (price list) of the rate.",
        "rate_type_ids": "Every rate type the rate is linked to.",
        "value": "The rate's value: a nightly price (OVERRIDE), an amount per night (ABSOLUTE) "
        "or a percent (RELATIVE), in the rate type's currency.",
        "quantifier": "How the value prices a night.",
        "status": "Whether the rate is in use.",
        "value_type": "Value type (e.g. single: the base price).",
        "priority": "Priority: of the rates that hold, the highest ranks first (docs/metrics.md, "
        "List prices).",
        "valid_from": "First arrival date the rate holds for (inclusive; null: open). "
        "Write-only at the service, so a read may leave it out.",
        "valid_to": "Last arrival date the rate holds for (inclusive; null: open).",
        "usage_duration_from": "First night the rate prices (inclusive; null: open).",
        "usage_duration_to": "Last night the rate prices (inclusive; null: open).",
        "bookdate_from": "First booking date the rate holds for (inclusive; null: open).",
        "bookdate_to": "Last booking date the rate holds for (inclusive; null: open).",
        "min_duration": "Shortest stay in nights the rate holds for (null: open).",
        "max_duration": "Longest stay in nights the rate holds for (null: open).",
        "applicable_days": "Weekdays of the nights it prices (null: every day).",
        "remark": "The rate's free-text remark as the service sends it (not interpreted).",
    },
    "availability": {
        "resource_id": "Accommodation type (key part).",
        "arrival_date": "Arrival date of the offer (key part).",
        "duration": "Nights of the offer (key part).",
        "accommodation_kind_id": "Accommodation kind id.",
        "location_code": "Code of the location.",
        "departure_date": "Departure date of the offer.",
        "available_units": "Units available for this arrival and duration.",
        "units": "Ids of the available units.",
        "max_capacity": "Most persons the accommodation type takes.",
        "pet_capacity": "Pets it still takes (0 when every pet-friendly unit is sold).",
    },
    "availability_prices": {
        "resource_id": "Accommodation type (key part; parent key).",
        "arrival_date": "Arrival date (key part; parent key).",
        "duration": "Nights (key part; parent key).",
        "rate_type_id": "Rate type priced (key part).",
        "currency_code": "Currency of the price.",
        "price": "Price of the whole stay at this rate type (DECIMAL(18,2)).",
    },
    "companies": {
        "company_id": "Company (legal entity) id (key).",
        "currency_code": "Currency the company reports in.",
        "country_code": "ISO country code of the company.",
    },
    "journal_reports": {
        "journal_report_id": "Journal report id (key).",
        "report_number": "Report number.",
        "type": "MUTATION_REPORT, REVENUE_DISTRIBUTION, OWNER_MUTATION_REPORT, "
        "PURCHASE_DISTRIBUTION, AR_AP_POSITION_OVERVIEW or AR_AP_REVALUATION_OVERVIEW.",
        "period_from": "First day of the period the report covers.",
        "period_to": "Last day of the period the report covers.",
        "currency_code": "Currency of the report's amounts.",
    },
    "journal_entries": {
        "journal_entry_id": "Journal entry id (key).",
        "report_id": "Journal report the entry belongs to (parent key).",
        "type": "Journal type of the report (see journal_reports.type).",
        "mutation_date": "Date the mutation was booked.",
        "resource_code": "Code of the resource the entry is about.",
        "ledger_number": "Ledger (account) number; 8xxx are revenue ledgers.",
        "second_ledger_number": "Contra ledger number.",
        "cost_center": "Cost center.",
        "debit_vat_included": "Debit amount including VAT (DECIMAL(18,2), the report's currency).",
        "credit_vat_included": "Credit amount including VAT.",
        "debit_vat_excluded": "Debit amount excluding VAT.",
        "credit_vat_excluded": "Credit amount excluding VAT.",
        "comments": "Free-text comment.",
    },
    "cash_accounts": {
        "cash_account_id": "Cash account (cash register) id (key).",
        "currency_code": "Currency the account counts in.",
    },
    "cash_clearances": {
        "cash_clearance_id": "Cash clearance id (key): one closing of a cash register.",
        "clearance_number": "Clearance number.",
        "clearance_date": "Business date the clearance closes.",
        "cleared_at": "When it was saved (UTC).",
        "start_balance": "Cash in the register at the start.",
        "expected_amount": "What the transactions since the previous clearance say is there.",
        "counted_cash": "Cash counted.",
        "counted_card": "Card payments counted.",
        "counted_cheque": "Cheques counted.",
        "counted_ancv": "ANCV holiday vouchers counted.",
        "difference": "Counted total - expected amount, as the service computed it.",
        "difference_reason": "Why counted and expected differ (free text).",
        "start_balance_next_day": "Cash left in the register for the next day.",
        "employee_id": "Employee who made the clearance.",
    },
    "customers": {
        "customer_id": "Customer id (key).",
        "country_code": "ISO country code of the customer.",
        "language": "Language of the customer.",
        "birth_year": "Year of birth (personal data: lands only with include_customer_pii).",
        "loyalty_level": "Loyalty level.",
        "first_name": "First name (personal data: lands only with include_customer_pii).",
        "middle_name": "Middle name (personal data).",
        "last_name": "Last name (personal data).",
        "email": "E-mail address (personal data).",
        "phone": "Phone number (personal data).",
        "address_address1": "Street address (personal data).",
        "address_zip_code": "Postal code (personal data).",
        "address_city": "City (personal data).",
        "address_country_code": "Country of the address (personal data).",
    },
    "customer_merges": {
        "old_customer_id": "Customer id merged away (key): read it as customer_id.",
        "customer_id": "Surviving customer id (the MERGE event's entityId).",
        "merged_at": "When the service merged them (UTC; the event's date).",
        "event_id": "Event that announced the merge.",
    },
    "reservations": {
        "reservation_id": "Reservation id (key).",
        "reservation_category_id": "Reservation category id.",
        "category_code": "Reservation category code (owner and block categories are not sold).",
        "category_name": "Reservation category name.",
        "type": "RESERVATION (a guest stay), INVOICE (e.g. owner use), CASH (on-site sale), "
        "ALLOTMENT or LINEAR.",
        "expected_arrival_date_time": "Expected arrival time (UTC).",
        "expected_departure_date_time": "Expected departure time (UTC).",
        "distribution_channel_code": "Code of the distribution channel.",
        "reservation_date": "When it was booked (UTC): the booking date of pace and lead time.",
        "modified_date": "When the service last modified it (UTC).",
        "cancel_date": "When it was cancelled (UTC; null unless cancelled).",
        "status": "Reservation status. On the books (sold): 12, 21, 31, 41; held: 10, 11; "
        "cancelled: -12, -13.",
        "voucher": "Booking reference of the originating system.",
        "validation_status": "Validation status: UNVALIDATED 0, VALIDATING 11, TO BE PROCESSED "
        "15, SEMI AUTOMATICALLY VALIDATED 16, TO BE VALIDATED 20, VALID 21, AUTOMATICALLY "
        "VALIDATED 22, SENT 31, TO BE INVOICED 41, INFORMATION NOT SEND 51, INFORMATION SEND "
        "55, NEVER TO BE SENT -5.",
    },
    "reserved_resources": {
        "reserved_resource_id": "Reserved resource id (key): one line of the reservation's "
        "content (the accommodation, an add-on, a discount).",
        "reservation_id": "Reservation it belongs to (parent key).",
        "resource_id": "Accommodation type or add-on reserved.",
        "unit_id": "Unit assigned (null before assignment).",
        "rate_type_id": "Rate type it was priced at.",
        "type": "Resource type: ACCOMMODATIONTYPE, EXTRA, SPECIAL, ...",
        "quantity": "How many of the resource are reserved.",
        "status_name": "Status name of the line.",
        "override_value": "Price set by hand over the rates (DECIMAL(18,2)).",
        "start_date": "First day reserved.",
        "end_date": "Last day reserved.",
    },
    "bill_lines": {
        "reservation_bill_line_id": "Bill line id (key).",
        "reservation_bill_id": "Bill the line is on.",
        "reservation_id": "Reservation id (parent key).",
        "payer_type": "Which bill of the reservation the line is on.",
        "bill_line_type": "Kind of line. Item lines (10, 20, 130, 190, 250) make up the TOTAL "
        "(70); the others summarise or sit outside it (docs/metrics.md).",
        "resource_id": "Accommodation type or add-on the line bills.",
        "resource_type": "Type of that resource: ACCOMMODATIONTYPE, EXTRA, SPECIAL (discount), ...",
        "reserved_resource_id": "Reserved resource the line bills.",
        "rate_id": "Rate that priced it (null when lines were merged).",
        "rate_type_id": "Rate type that priced it.",
        "description": "Text of the line.",
        "quantity": "Quantity billed.",
        "multiplier": "Multiplier (e.g. nights).",
        "value": "Unit value (DECIMAL(18,2), the channel's currency).",
        "total": "Line total, VAT included (DECIMAL(18,2), the channel's currency).",
        "vat_rate": "VAT percent included in the total.",
        "start_date": "First night the line bills (null: the reserved resource's stay).",
        "end_date": "Last day of the line's period.",
    },
    "reservation_subjects": {
        "reservation_subject_id": "Reservation subject id (key).",
        "reservation_id": "Reservation (parent key).",
        "subject_id": "Subject (person category, pet, vehicle...).",
        "type": "PET, CATEGORY, PERSON, VEHICLE, OTHER or EQUIPMENT.",
        "age_from": "Lowest age of the subject category.",
        "age_to": "Highest age of the subject category.",
        "quantity": "How many of the subject travel.",
    },
    "operation_tasks": {
        "issue_incident_id": "The operations issue or incident the task resolves.",
        "task_type": "Kind of task (e.g. REPAIR, MAINTENANCE, CLEANING).",
        "description": "Free text of the task.",
        "status": "Task status as the service names it (e.g. OPEN, DONE).",
        "out_of_order": "True when the task takes its unit out of order: out_of_order_from "
        "to out_of_order_to are not sellable supply.",
        "out_of_order_from": "First night the unit is out of order.",
        "out_of_order_to": "The day after the last night out of order (like a departure date).",
    },
    "periodical_tasks": {
        "task_type": "Kind of recurring task.",
        "description": "Free text of the task.",
        "interval_days": "Days between two occurrences.",
    },
    "allotments": {
        "release_days": "Days before each night at which the night's units not picked up "
        "return to free sale.",
    },
    "rentability_sets": {
        "arrival_days": "Weekdays (MON..SUN) on which a stay under this rule may arrive.",
        "min_duration": "Shortest stay allowed, in nights.",
        "max_duration": "Longest stay allowed, in nights (null: no limit).",
    },
    "rentability_config": {
        "resource_type": "Kind of resource the rule applies to (ACCOMMODATIONTYPE, ...).",
        "rentability_set_id": "The rule (rentability set) that holds for these arrivals.",
    },
    "resource_reservability": {
        "resource_type": "Kind of resource (ACCOMMODATIONTYPE, add-on, offer, unit).",
        "reservable": "True when the resource may be reserved at all.",
        "reservable_on_internet": "True when it may be reserved online.",
    },
    # the channels' commission and cancellation add-ons, the add-ons and the owners
    **COMMERCIAL_TABLES,
    # offers with their rates, and the additions of types and offers
    **OFFER_TABLES,
}


def codes_text(column: Column) -> str:
    """'Codes: -12 = CANCELLED, ...' for a coded column ('' for others)."""
    if column.codes is None:
        return ""
    names = CODE_NAMES.get(tuple(column.codes), {})
    listed = ", ".join(f"{c} = {names[c]}" if c in names else str(c) for c in column.codes)
    return f"Codes: {listed}; any other value is quarantined."


def describe(table: Table, column: Column) -> str:
    """The description of one landed column: its table's entry, else the shared one, with the
    codes of a coded column and a note on personal data."""
    own = TABLES.get(table.name, {})
    text = own.get(column.column) or SHARED.get(column.column, "").format(
        entity=ENTITIES.get(table.name, table.name)
    )
    if column.codes is not None:
        text = " ".join(t for t in (text or f"{column.source}.", codes_text(column)) if t)
    if column.required and column.column in table.key and "(key" not in text:
        text += " Part of the key."
    return text


def lake_column_docs(table: Table, include_pii: bool = True) -> dict[str, str]:
    """Every column of a lake table (lineage included) -> its description."""
    docs = {c.column: describe(table, c) for c in table.landed(include_pii)}
    return {**docs, **LINEAGE}
