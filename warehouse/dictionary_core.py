"""The core models' column descriptions: the columns a core model computes.

A core column that carries a column of a model it reads, under the same name, keeps that
column's description (`warehouse.catalog`), so only computed or renamed columns are written
here; an entry here wins over the inherited text where the meaning changes.
"""

from __future__ import annotations

from warehouse.dictionary_cells import CELLS
from warehouse.dictionary_supply import ALLOTMENT_PICKUP

_MONEY = "DECIMAL(18,2), in the row's currency_code"
_MONEY38 = "DECIMAL(38,2) (an exact sum), in the row's currency_code"
_CENTS = "allocated to nights in integer cents (the line's own period, else its reserved "
_CENTS += "resource's, else the accommodation's)"
_ON_THE_BOOKS = (
    "Status on the books (12 PROVISIONAL, 21 DEFINITIVE, 31 CHECKED_IN, 41 CHECKED_OUT)."
)
_FLAGS: dict[str, str] = {
    "is_on_the_books": _ON_THE_BOOKS,
    "is_held": "Held, not sold: status 10 REQUEST or 11 OPTIONAL.",
    "is_quoted": "Quoted, not sold: status -5 QUOTATION.",
    "is_cancelled": "Cancelled: status -12 CANCELLED or -13 DEFINITIVE_CANCELLED.",
    "is_declined": "Declined: status -10.",
    "is_expired": "Expired: status -11.",
    "is_owner_hold": "On the books and owner use or a block (type INVOICE or category OWNER / "
    "BLOCK): an owner / hold night, shown, never sold.",
    "is_guest_stay": "A guest stay: type RESERVATION and category not OWNER / BLOCK.",
    "is_sold": "Sold: on the books and a guest stay (the nights sold of metrics.md).",
}

CORE: dict[str, dict[str, str]] = {
    "core.dim_locations": {
        "parent_location_id": "Parent location in the service's hierarchy (null at the top).",
        "company_id": "Company of the location: the lowest company id of its admin "
        "organisation, else the location's own companyId.",
        "currency_code": "The company's currency (the location's reporting currency).",
        "is_bookable": "False for a node of the hierarchy that cannot be booked.",
    },
    "core.dim_accommodation_types": {
        "company_id": "Company of the accommodation type's location.",
        "unit_count": "Units of this accommodation type (archived ones included).",
    },
    "core.dim_reporting_currencies": {
        "currency_code": "A reporting currency of marts.revenue_daily: a location's company "
        "currency, or a currency sold or kept as cancellation compensation in the reporting range.",
    },
    "core.dim_pace_currencies": {
        "currency_code": "A currency of marts.booking_pace's grid: of a guest stay night on the "
        "books or cancelled, or of a reservation whose history holds an on-the-books guest "
        "version with nights (a currency of core.fct_pace_night_spans).",
        "night_spans": "How many rows of core.fct_pace_night_spans are in the currency (at "
        "least one: a currency without any is no row).",
    },
    "core.fct_guest_stays": {
        "month_start": "Arrival month of the stay.",
        "persons": "Persons booked: the PERSON subjects' quantities (0 when none).",
        "arrival_weekday": "Weekday of the arrival, MON..SUN.",
        "arrival_isodow": "ISO weekday of the arrival (1 Monday .. 7 Sunday).",
        "is_repeat": "The customer (merges resolved) has a sold stay arriving earlier (ties by "
        "reservation id); false without a customer.",
        "party_bucket": "Party size bucket: persons, 6+ from six.",
        "party_order": "Sort order of party_bucket: persons, at most 6.",
        "stay_bucket": "Length of stay bucket: nights 1, 2, 3, 4, 5-6, 7, 8-13, 14+.",
        "stay_order": "Sort order of stay_bucket: the lowest night count of the bucket.",
        "window_bucket": "Booking window bucket: days from booking to arrival 0-6, 7-13, 14-29, "
        "30-59, 60-89, 90-179, 180+.",
        "window_order": "Sort order of window_bucket: the lowest day count of the bucket.",
    },
    "core.fct_guest_mix_cells": {
        "month_start": "Arrival month of the stays.",
        "dimension": "What the stays are split by: guest_type, country, party_size, "
        "length_of_stay, booking_window, arrival_weekday (each stay once in each).",
        "bucket": "The value within the dimension (core.fct_guest_stays: first / repeat, "
        "country_code, party_bucket, stay_bucket, window_bucket, arrival_weekday).",
        "bucket_order": "Sort order of the bucket within its dimension (0 for country).",
        "stays": "Sold stays arriving in the month, in the bucket.",
        "guests": "Their persons booked.",
    },
    "core.fct_reconciliation_bills": {
        "month_start": "Booking month of the reservation; its cancellation month (else booking "
        "month) for a cancelled one's compensation.",
        "bill_revenue": "Sum of the counted bill lines' totals (item lines of an on-the-books "
        f"reservation, tourist tax left out; a cancelled one's compensation), {_MONEY38}.",
        "lines": "How many bill lines that counts.",
    },
    "core.fct_reconciliation_journal_cells": {
        "journal_revenue": "Credit - debit on revenue ledgers (8xxx), VAT included, by "
        f"mutation month, {_MONEY38}.",
        "journal_revenue_vat_excluded": f"The same VAT excluded, {_MONEY38}.",
        "entries": "How many journal entries that sums.",
    },
    "core.fct_offer_stay_months": {
        "part": "'taken': the reservation's sold nights in the month (reporting range) while it "
        "took the offer; 'discount': the offer's discount allocated to those nights.",
        "offer_id": "The offer: the resource of a discount line (item line of resourceType "
        "SPECIAL, total not 0) on the reservation's bills.",
        "is_booked": "Part 'taken': one of the month's sold nights is a stay night (the stay "
        "counts once in the mart's bookings); null in part 'discount'.",
        "nights": "Part 'taken': the stay nights among them; null in part 'discount'.",
        "room_cents": "Part 'taken': their room revenue in integer cents, as billed (after the "
        "discount); null in part 'discount'.",
        "discount_cents": "Part 'discount': the discount on those nights in integer cents, "
        "positive (the negated line allocation, VAT included); null in part 'taken'.",
        "discount_net_cents": "Part 'discount': the same net of VAT; null in part 'taken'.",
    },
    "core.fct_pace_night_spans": {
        "room_revenue": "Today's allocation of the reservation's room revenue to this night "
        "(0 for a night of a past version that the reservation no longer holds).",
        "is_from_history": "True: a night of an on-the-books guest version, counted as of the "
        "dates at whose end that version was in force. False: a guest stay night on the books "
        "or cancelled today, counted by today's status.",
        "first_as_of_date": "First as-of date at which the night counts: the version's "
        "effective_from date, or (today's status) the booking date.",
        "last_as_of_date": "Last as-of date at which the night counts, inclusive: the day "
        "before the version's effective_to (the next version's start), or (today's status) the day before the "
        "cancellation; 9999-12-31 while open; null: never (cancelled without a date).",
        "history_start_date": "First day of the reservation's recorded history (its first "
        "version's effective_from); today's status judges only as-of dates before it. "
        "9999-12-31 without a recorded version.",
    },
    "core.fct_pace_span_groups": {
        "first_counted_date": "First as-of date at which the group's nights count: their "
        "first_as_of_date, or 372 days before the night when later.",
        "last_counted_date": "Last as-of date at which they count, inclusive: their "
        "last_as_of_date, or the night itself when earlier.",
        "before_history_until": "Today's status (is_from_history false): the as-of dates "
        "before this one are before the reservation's recorded history (its history start, "
        "cut to the counted dates); null for nights from history.",
        "nights": "Nights of core.fct_pace_night_spans in the group.",
        "room_revenue": f"Their room revenue (today's allocation); {_MONEY38}.",
    },
    "core.fct_pace_on_the_books": {
        "as_of_date": "Weekly snapshot: the build's as_of and the 105 weeks before it (those "
        "marts.booking_pace reports, and those its pickup and STLY look back to).",
        "stay_date": "Night counted, from the snapshot to 372 days after it.",
        "currency_code": "Currency of the reservations counted (ISO 4217).",
        "nights_from_history": "Nights of on-the-books guest versions in force at the end of "
        "the as-of date.",
        "room_revenue_from_history": f"Today's room revenue of those nights; {_MONEY38}.",
        "nights_by_current_status": "Guest stay nights counted by today's status: booked on or "
        "before the as-of date and on the books now, or cancelled after it.",
        "room_revenue_by_current_status": f"Room revenue of those nights; {_MONEY38}.",
        "nights_before_history": "Of nights_by_current_status, those of reservations whose "
        "recorded history starts after the as-of date.",
        "room_revenue_before_history": f"Room revenue of those nights; {_MONEY38}.",
    },
    "core.dim_distribution_channels": {
        "parent_distribution_channel_id": "Parent channel (null at the top).",
    },
    "core.dim_owner_contracts": {
        "owner_country_code": "ISO country code of the contract's owner (the country of their "
        "address).",
        "owner_language": "Language the contract's owner corresponds in.",
        "share_basis_points": "revenue_share_percentage in whole basis points (hundredths of a "
        "percent, rounded): the owner share of a contract's month is its room revenue net in "
        "cents x basis points / 10000, rounded half away from zero, in exact integers.",
    },
    "core.dim_dates": {
        "date_day": "The date (one row per date the models use).",
        "month_start": "First day of its calendar month.",
        "week_start": "Monday of its ISO week.",
        "year_number": "Calendar year.",
        "quarter_number": "Calendar quarter (1-4).",
        "month_number": "Calendar month (1-12).",
        "iso_weekday": "ISO weekday: 1 Monday to 7 Sunday.",
        "weekday_code": "Weekday as the rates name it (MON ... SUN).",
        "is_weekend": "Saturday or Sunday.",
        "is_in_reporting_range": "A night of the nightly grain: from the earliest arrival to "
        "the night before the latest departure (or the build's reporting_range).",
    },
    "core.fct_availability": {
        "departure_date": "Departure date of the offer (arrival + duration when not given).",
        "available_units": "Units available (availableUnits, else the count of units[]).",
        "listed_unit_count": "How many unit ids the offer lists (units[]).",
        "average_nightly_price": f"price / duration, rounded half away from zero to the cent. "
        f"{_MONEY}.",
    },
    "core.fct_bill_lines": {
        "bill_line_type_name": "Name of the bill line type (RESERVED_RESOURCE, TOTAL, ...).",
        "line_class": "item (10, 20, 130, 190, 250: make up the TOTAL), summary (40, 60, 70, 80, "
        "90, 120, 260), commission (100, 110) or other (50, 140, 180).",
        "revenue_class": "What an item line earns: room (10 or 130 on an ACCOMMODATIONTYPE or "
        "SPECIAL resource), extra (other 130; 10 and 20 on an EXTRA), cancellation (190), tax "
        "(250, never revenue) or other; null for lines that are not items.",
        "total_cents": "Line total, VAT included, in integer cents.",
        "vat_cents": "VAT inside the line in cents: total x vatRate / (100 + vatRate), half "
        "away from zero, for item lines; the whole line for COMMISSION_VAT (110); else 0.",
        "line_nights": "Nights of the line's own period (end_date - start_date).",
        "currency_code": "Currency of the line: its reservation's distribution channel's.",
    },
    "core.fct_bill_line_nights": {
        "night_date": "Night D the share of the line falls on: a night of the line's own "
        "period, else its reserved resource's, else the accommodation's (the first night for a "
        "period of zero or negative length).",
        "cents": "The line's total, VAT included, allocated to night D in integer cents: total "
        "// nights on each night, the first |total| mod nights nights taking one cent more (the "
        "nights of a line add up to its total).",
        "net_cents": "The line's total less its VAT (total_cents - vat_cents) allocated to night "
        "D by the same rule, in integer cents.",
    },
    "core.fct_cash_clearances": {
        "counted_total": "counted cash + card + cheque + ANCV (a missing count as 0).",
    },
    "core.fct_journal_entries": {
        "journal_report_id": "Journal report the entry belongs to.",
        "journal_type": "Journal type of the report (see journal_reports.type).",
        "report_type": "Journal type of the entry's report.",
        "company_id": "Company of the report, else of the entry's location.",
        "currency_code": "Currency of the report, else the company's.",
        "month_start": "First day of the mutation date's month.",
        "net_vat_included": "credit - debit, VAT included (revenue on a revenue ledger).",
        "net_vat_excluded": "credit - debit, VAT excluded.",
        "is_revenue_ledger": "Ledger number starts with 8.",
        "is_cancellation_ledger": "Ledger 8300: retained cancellation compensation.",
        "lake_debit_vat_included": "Debit amount including VAT as the lake holds it (null "
        "when the service gave none; debit_vat_included counts that as 0).",
        "lake_credit_vat_included": "Credit amount including VAT as the lake holds it (null "
        "when the service gave none; credit_vat_included counts that as 0).",
        "lake_debit_vat_excluded": "Debit amount excluding VAT as the lake holds it (null "
        "when the service gave none; debit_vat_excluded counts that as 0).",
        "lake_credit_vat_excluded": "Credit amount excluding VAT as the lake holds it (null "
        "when the service gave none; credit_vat_excluded counts that as 0).",
    },
    "core.fct_rate_nights": {
        "night_date": "Night D priced.",
        "rate_id": "The OVERRIDE rate that sets the base price (docs/metrics.md, List prices).",
        "priority": "Priority of that rate.",
        "base_price": f"Base price: the winning OVERRIDE's value. {_MONEY}.",
        "adjustment_rate_ids": "ABSOLUTE and RELATIVE rates added to the base.",
        "list_price": "List price of night D for the reference stay (arriving D for 7 nights, "
        f"booked on D): base + adjustments, never below 0. {_MONEY}.",
    },
    "core.fct_reservation_versions": {
        "version_number": "1 for the first version observed, then 2, 3, ...",
        "valid_from": "When this version started: the service's modifiedDate (extraction time "
        "for a deletion).",
        "valid_to": "When the next version started (null for the latest).",
        "is_deleted": "The version is a deletion (tombstone).",
        "status_name": "Name of status_code (CANCELLED, DEFINITIVE, ...).",
        "is_on_the_books": "This version is on the books: not a deletion, status 12, 21, 31 or "
        "41 (what booking_pace counts as of a date in its validity).",
        "is_guest_stay": _FLAGS["is_guest_stay"],
        "nights": "departure_date - arrival_date.",
        "observed_at": "When the lake read this version.",
        "is_current": "The latest version, not deleted, and the one staging keeps.",
        "effective_from": "When this version takes effect for booking pace: valid_from, but "
        "never before the cancellation it records (cancelled_at of a cancelled version).",
        "effective_to": "When the next version takes effect (null for the latest): this "
        "version is the one in force at the end of each day from effective_from to the day "
        "before effective_to.",
    },
    "core.fct_reservations": {
        "status_name": "Name of status_code (CANCELLED, DEFINITIVE, ...).",
        "nights": "Stay nights: departure_date - arrival_date.",
        "booking_date": "Day of reserved_at (UTC): the booking date.",
        "lead_time_days": "Lead time: arrival_date - booking_date in days.",
        "cancelled_on": "Day of cancelled_at (UTC).",
        "customer_id": "Customer, after customer merges (up to three merges followed).",
        "original_customer_id": "Customer id as the reservation gives it (before merges).",
        "distribution_channel_code": "Code of the distribution channel.",
        "currency_code": "Currency of the reservation's money: its distribution channel's.",
        "location_id": "Location: the accommodation type's, else the reservation's.",
        "company_id": "Company of that location.",
        "accommodation_type_id": "Accommodation type of the first ACCOMMODATIONTYPE reserved "
        "resource.",
        "unit_id": "Unit of that reserved resource (null before assignment).",
        "reserved_resource_id": "That reserved resource.",
        "rate_type_id": "Rate type of that reserved resource.",
        "stay_start_date": "First day of the accommodation's reservation (else arrival_date).",
        "stay_end_date": "Last day of the accommodation's reservation (else departure_date).",
        **_FLAGS,
        "room_revenue": f"Room revenue on the bill, VAT included (revenue_class room). {_MONEY}.",
        "extra_revenue": f"Extras on the bill, VAT included (revenue_class extra). {_MONEY}.",
        "total_revenue": f"room_revenue + extra_revenue. {_MONEY}.",
        "tourist_tax": f"Tourist tax lines (250), never revenue. {_MONEY}.",
        "cancellation_revenue": "Retained cancellation compensation (190), a revenue of its "
        f"own. {_MONEY}.",
        "commission": f"Commission lines (100, 110; agent bill), VAT included. {_MONEY}.",
        "item_total": f"Sum of every item line (what the TOTAL line should be). {_MONEY}.",
    },
    "core.fct_stay_nights": {
        "rate_type_id": "Rate type of the reservation's accommodation.",
        "currency_code": "Currency of the reservation's money: its distribution channel's.",
        "night_date": "Night D of the reservation.",
        "is_stay_night": "arrival_date <= D < departure_date (false: a night carrying only "
        "money allocated outside the stay).",
        "room_revenue": f"Room revenue of the night, VAT included, {_CENTS}. {_MONEY}.",
        "extra_revenue": f"Extras of the night, VAT included, same allocation. {_MONEY}.",
        "total_revenue": f"room_revenue + extra_revenue of the night. {_MONEY}.",
        "tourist_tax": f"Tourist tax of the night, same allocation. {_MONEY}.",
        "cancellation_revenue": "Retained cancellation compensation of the night (the nights it "
        f"cancelled), same allocation. {_MONEY}.",
        "other_item_amount": f"Item lines of class other on the night. {_MONEY}.",
        "commission": f"Commission of the night, VAT included, same allocation. {_MONEY}.",
        "room_revenue_net": f"Room revenue of the night, VAT excluded. {_MONEY}.",
        "extra_revenue_net": f"Extras of the night, VAT excluded. {_MONEY}.",
        "total_revenue_net": f"room_revenue_net + extra_revenue_net. {_MONEY}.",
        "commission_net": f"Commission of the night, VAT excluded (100 lines). {_MONEY}.",
    },
    "core.fct_stay_rate_nights": {
        "rate_type_id": "Rate type of the reservation's accommodation.",
        "night_date": "Stay night D (arrival <= D < departure).",
        "stay_nights": "Nights of the stay as it is now (departure - arrival).",
        "rate_id": "The OVERRIDE rate that sets the night's base price for this stay.",
        "priority": "Priority of that rate.",
        "base_price": f"Base price: the winning OVERRIDE's value. {_MONEY}.",
        "adjustment_rate_ids": "ABSOLUTE and RELATIVE rates added (null without a base rate).",
        "list_price": "What the rates charge for night D of this stay (its arrival, nights and "
        f"booking date): base + adjustments, never below 0. {_MONEY}.",
    },
    "core.fct_unit_nights": {
        "night_date": "Night D of the reporting range.",
        "is_available": "A supply night: setup_date <= D (or none) and archived_from null or "
        "after D.",
        "is_sold": "An on-the-books guest stay has the unit on D.",
        "is_owner_hold": "An on-the-books owner / block reservation has the unit on D.",
        "is_double_booked": "More than one on-the-books reservation has the unit on D.",
    },
    # marts.allotment_pickup's rows, stored without their date (the mart is a view adding it)
    "core.fct_allotment_pickup_weeks": {
        "weeks_back": "The snapshot: weeks before the build's as_of (0: the as_of itself, to "
        "12); marts.allotment_pickup's as_of_date is as_of - 7 x weeks_back. A new as_of "
        "moves no stored row (docs/incremental.md).",
        **{c: text for c, text in ALLOTMENT_PICKUP.items() if c != "as_of_date"},
    },
    **CELLS,
}
