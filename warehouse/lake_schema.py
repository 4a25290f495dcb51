"""The lake tables the warehouse reads, as data: columns and DuckDB types, keys, parent tables.

One place for the lake contract (docs/contracts.md section 3): the builder uses it to cast what
it reads, to build correctly-typed empty relations for missing tables, and to derive the
current-state rule (latest row per key, tombstones, full batches, child replacement).
"""

from __future__ import annotations

from dataclasses import dataclass, field

BIGINT = "BIGINT"
TEXT = "VARCHAR"
DATE = "DATE"
TS = "TIMESTAMPTZ"
MONEY = "DECIMAL(18,2)"
NUM = "DOUBLE"
BOOL = "BOOLEAN"
IDS = "BIGINT[]"
TEXTS = "VARCHAR[]"

LINEAGE: dict[str, str] = {
    "_batch_id": TEXT,
    "_batch_kind": TEXT,
    "_extracted_at": TS,
    "_source": TEXT,
    "_is_deleted": BOOL,
    "_extra": TEXT,
}


@dataclass(frozen=True)
class TableSpec:
    """A lake table: its service columns, primary key and (for child tables) its parent."""

    columns: dict[str, str]
    key: tuple[str, ...]
    parent: str | None = None
    # child column -> parent key column
    parent_key: dict[str, str] = field(default_factory=dict)

    @property
    def all_columns(self) -> dict[str, str]:
        return {**self.columns, **LINEAGE}


TABLES: dict[str, TableSpec] = {
    "distribution_channels": TableSpec(
        {
            "distribution_channel_id": BIGINT,
            "code": TEXT,
            "name": TEXT,
            "type": TEXT,
            "parent_id": BIGINT,
            "currency_id": BIGINT,
            "currency_code": TEXT,
            "commission_percentage": NUM,
            "active_start_date": DATE,
            "active_end_date": DATE,
            "archived_from": DATE,
            "allotment_only": BOOL,
        },
        ("distribution_channel_id",),
    ),
    "locations": TableSpec(
        {
            "location_id": BIGINT,
            "code": TEXT,
            "location_number": BIGINT,
            "parent_id": BIGINT,
            "admin_organisation_id": BIGINT,
            "company_id": BIGINT,
            "bookable_location": BOOL,
            "archived_from": DATE,
            "min_age_for_booking": BIGINT,
            "name": TEXT,
            "visit_address_address1": TEXT,
            "visit_address_zip_code": TEXT,
            "visit_address_city": TEXT,
            "visit_address_country_code": TEXT,
        },
        ("location_id",),
    ),
    "accommodation_types": TableSpec(
        {
            "resource_id": BIGINT,
            "code": TEXT,
            "location_id": BIGINT,
            "accotype_kind_id": BIGINT,
            "kind_code": TEXT,
            "type": TEXT,
            "nr_of_bedrooms": BIGINT,
            "nr_of_bathrooms": NUM,
            "number_of_persons": BIGINT,
            "has_objects": BOOL,
            "priority": BIGINT,
            "checkin_time": TEXT,
            "checkout_time": TEXT,
            "archived_from": DATE,
            "name": TEXT,
        },
        ("resource_id",),
    ),
    "accommodation_type_capacities": TableSpec(
        {
            "capacity_id": BIGINT,
            "resource_id": BIGINT,
            "capacity": BIGINT,
            "subject_id": BIGINT,
            "start_date": DATE,
            "end_date": DATE,
            "name": TEXT,
        },
        ("capacity_id", "resource_id"),
        parent="accommodation_types",
        parent_key={"resource_id": "resource_id"},
    ),
    "units": TableSpec(
        {
            "unit_id": BIGINT,
            "resource_id": BIGINT,
            "code": TEXT,
            "room_code": TEXT,
            "nr_of_bedrooms": BIGINT,
            "nr_of_bathrooms": NUM,
            "choosable_on_internet": BOOL,
            "cleaning_status": TEXT,
            "setup_date": DATE,
            "archived_from": DATE,
            "name": TEXT,
        },
        ("unit_id",),
    ),
    "rate_types": TableSpec(
        {
            "rate_type_id": BIGINT,
            "code": TEXT,
            "name": TEXT,
            "currency_code": TEXT,
            "distribution_channel_ids": IDS,
            "priority": BIGINT,
        },
        ("rate_type_id",),
    ),
    "rate_options": TableSpec(
        {
            "rate_option_id": BIGINT,
            "rate_type_id": BIGINT,
            "code": TEXT,
            "name": TEXT,
            "option_type": TEXT,
        },
        ("rate_option_id",),
    ),
    "rates": TableSpec(
        {
            "rate_id": BIGINT,
            "resource_id": BIGINT,
            "rate_type_id": BIGINT,
            "rate_type_ids": IDS,
            "rate_option_id": BIGINT,
            "value": MONEY,
            "quantifier": TEXT,
            "value_type": TEXT,
            "priority": BIGINT,
            "valid_from": DATE,
            "valid_to": DATE,
            "bookdate_from": DATE,
            "bookdate_to": DATE,
            "min_duration": BIGINT,
            "max_duration": BIGINT,
            "applicable_days": TEXTS,
            "status": BIGINT,
        },
        ("rate_id",),
    ),
    "availability": TableSpec(
        {
            "resource_id": BIGINT,
            "arrival_date": DATE,
            "duration": BIGINT,
            "accommodation_kind_id": BIGINT,
            "location_id": BIGINT,
            "location_code": TEXT,
            "departure_date": DATE,
            "available_units": BIGINT,
            "units": IDS,
            "max_capacity": BIGINT,
            "pet_capacity": BIGINT,
        },
        ("resource_id", "arrival_date", "duration"),
    ),
    "availability_prices": TableSpec(
        {
            "resource_id": BIGINT,
            "arrival_date": DATE,
            "duration": BIGINT,
            "rate_type_id": BIGINT,
            "currency_code": TEXT,
            "price": MONEY,
        },
        ("resource_id", "arrival_date", "duration", "rate_type_id"),
        parent="availability",
        parent_key={"resource_id": "resource_id", "arrival_date": "arrival_date", "duration": "duration"},
    ),
    "companies": TableSpec(
        {
            "company_id": BIGINT,
            "code": TEXT,
            "name": TEXT,
            "admin_organisation_id": BIGINT,
            "currency_code": TEXT,
            "country_code": TEXT,
        },
        ("company_id",),
    ),
    "journal_reports": TableSpec(
        {
            "journal_report_id": BIGINT,
            "company_id": BIGINT,
            "report_number": BIGINT,
            "type": TEXT,
            "period_from": DATE,
            "period_to": DATE,
            "created_date": TS,
            "currency_code": TEXT,
        },
        ("journal_report_id",),
    ),
    "journal_entries": TableSpec(
        {
            "journal_entry_id": BIGINT,
            "report_id": BIGINT,
            "type": TEXT,
            "report_number": BIGINT,
            "mutation_date": DATE,
            "reservation_id": BIGINT,
            "reservation_number": TEXT,
            "location_id": BIGINT,
            "resource_code": TEXT,
            "ledger_number": TEXT,
            "second_ledger_number": TEXT,
            "cost_center": TEXT,
            "debit_vat_included": MONEY,
            "credit_vat_included": MONEY,
            "debit_vat_excluded": MONEY,
            "credit_vat_excluded": MONEY,
            "customer_id": BIGINT,
            "distribution_channel_id": BIGINT,
            "reserved_resource_id": BIGINT,
            "comments": TEXT,
        },
        ("journal_entry_id",),
        parent="journal_reports",
        parent_key={"report_id": "journal_report_id"},
    ),
    "cash_accounts": TableSpec(
        {
            "cash_account_id": BIGINT,
            "company_id": BIGINT,
            "location_id": BIGINT,
            "code": TEXT,
            "name": TEXT,
            "currency_code": TEXT,
        },
        ("cash_account_id",),
    ),
    "cash_clearances": TableSpec(
        {
            "cash_clearance_id": BIGINT,
            "cash_account_id": BIGINT,
            "clearance_number": BIGINT,
            "clearance_date": DATE,
            "cleared_at": TS,
            "start_balance": MONEY,
            "expected_amount": MONEY,
            "counted_cash": MONEY,
            "counted_card": MONEY,
            "counted_cheque": MONEY,
            "counted_ancv": MONEY,
            "difference": MONEY,
            "difference_reason": TEXT,
            "start_balance_next_day": MONEY,
            "employee_id": BIGINT,
        },
        ("cash_clearance_id",),
    ),
    "customers": TableSpec(
        {
            "customer_id": BIGINT,
            "country_code": TEXT,
            "language": TEXT,
            "birth_year": BIGINT,
            "loyalty_level": TEXT,
            "created_date": TS,
            "modified_date": TS,
        },
        ("customer_id",),
    ),
    "customer_merges": TableSpec(
        {"old_customer_id": BIGINT, "customer_id": BIGINT, "merged_at": TS},
        ("old_customer_id",),
    ),
    "reservations": TableSpec(
        {
            "reservation_id": BIGINT,
            "reservation_number": TEXT,
            "reservation_category_id": BIGINT,
            "category_code": TEXT,
            "category_name": TEXT,
            "type": TEXT,
            "status": BIGINT,
            "arrival_date": DATE,
            "departure_date": DATE,
            "expected_arrival_date_time": TS,
            "expected_departure_date_time": TS,
            "customer_id": BIGINT,
            "distribution_channel_id": BIGINT,
            "distribution_channel_code": TEXT,
            "location_id": BIGINT,
            "reservation_date": TS,
            "modified_date": TS,
            "cancel_date": TS,
            "voucher": TEXT,
            "validation_status": BIGINT,
        },
        ("reservation_id",),
    ),
    "reserved_resources": TableSpec(
        {
            "reserved_resource_id": BIGINT,
            "reservation_id": BIGINT,
            "resource_id": BIGINT,
            "unit_id": BIGINT,
            "rate_type_id": BIGINT,
            "type": TEXT,
            "code": TEXT,
            "name": TEXT,
            "quantity": BIGINT,
            "start_date": DATE,
            "end_date": DATE,
            "status_name": TEXT,
            "override_value": MONEY,
        },
        ("reserved_resource_id",),
        parent="reservations",
        parent_key={"reservation_id": "reservation_id"},
    ),
    "bill_lines": TableSpec(
        {
            "reservation_bill_line_id": BIGINT,
            "reservation_bill_id": BIGINT,
            "reservation_id": BIGINT,
            "payer_type": TEXT,
            "bill_line_type": BIGINT,
            "resource_id": BIGINT,
            "resource_type": TEXT,
            "reserved_resource_id": BIGINT,
            "rate_id": BIGINT,
            "rate_type_id": BIGINT,
            "description": TEXT,
            "quantity": BIGINT,
            "multiplier": BIGINT,
            "value": MONEY,
            "total": MONEY,
            "vat_rate": NUM,
            "start_date": DATE,
            "end_date": DATE,
        },
        ("reservation_bill_line_id",),
        parent="reservations",
        parent_key={"reservation_id": "reservation_id"},
    ),
    "reservation_subjects": TableSpec(
        {
            "reservation_subject_id": BIGINT,
            "reservation_id": BIGINT,
            "subject_id": BIGINT,
            "type": TEXT,
            "age_from": BIGINT,
            "age_to": BIGINT,
            "quantity": BIGINT,
        },
        ("reservation_subject_id",),
        parent="reservations",
        parent_key={"reservation_id": "reservation_id"},
    ),
}
