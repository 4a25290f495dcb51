"""The metric dictionary: what every mart column means and which definition it uses.

One structure feeds the `COMMENT ON COLUMN`s the builder writes into the warehouse (through
`warehouse.catalog`), Dagster's column schema of the marts and `docs/metrics.md`
(`warehouse.metrics_doc`; a test keeps them in sync).
"""

from __future__ import annotations

from warehouse.dictionary_commercial import (
    ANCILLARY_REVENUE,
    CHANNEL_NET_REVENUE,
    GUEST_MIX,
    OFFER_DISCOUNT,
    OWNER_STATEMENT,
)
from warehouse.dictionary_pace import BOOKING_PACE
from warehouse.dictionary_rates import RATE_AVAILABILITY
from warehouse.dictionary_sales import SALES_MARTS
from warehouse.dictionary_supply import (
    ALLOTMENT_PICKUP,
    OCCUPANCY_SUPPLY,
    ORPHAN_NIGHTS,
)

_SOLD = (
    "on-the-books (status 12, 21, 31, 41) guest stays (type RESERVATION, category not OWNER/BLOCK)"
)
_NIGHT = "night D with arrival <= D < departure"
_MONEY = "DECIMAL(18,2), in the row's currency_code"
_DIV = "rounded half away from zero to the cent; null when the divisor is 0"
_RATIO = "DOUBLE ratio; null when the divisor is 0; recompute from the counts, never average it"
_VAT = (
    "the VAT each bill line includes (line total x vatRate / (100 + vatRate), to the cent, half "
    "away from zero, per line), spread over the line's nights like its total"
)
_REVPAR_SUM = (
    "Over several nights, types or parks: sum the revenue and sum nights_available over the rows "
    "of ONE currency, then divide; never average the daily figure"
)
_GROSS = "VAT included, as billed (like the list prices)"

COMMON: dict[str, str] = {
    "date_day": "The night (stay night D) the row describes.",
    "location_id": "Location (park); for stays the accommodation type's location.",
    "location_code": "Code of the location.",
    "accommodation_type_id": "Accommodation type (resourceId of the ACCOMMODATIONTYPE reserved resource).",
    "accommodation_type_code": "Code of the accommodation type.",
    "currency_code": "Currency of every money column of the row (from the distribution channel); "
    "figures in different currencies are never summed.",
    "company_id": "Company (legal entity).",
    "month_start": "First day of the calendar month.",
    "distribution_channel_id": "Distribution channel of the reservations.",
}

MARTS: dict[str, dict[str, str]] = {
    "marts.occupancy_daily": {
        "date_day": COMMON["date_day"],
        "location_id": COMMON["location_id"],
        "location_code": COMMON["location_code"],
        "accommodation_type_id": COMMON["accommodation_type_id"],
        "accommodation_type_code": COMMON["accommodation_type_code"],
        "nights_available": "Nights available (metrics.md): units with setup_date <= D and "
        "archived_from null or after D.",
        "nights_sold": f"Nights sold (metrics.md): stay nights ({_NIGHT}) of {_SOLD}.",
        "owner_hold_nights": "Owner / hold nights: stay nights of on-the-books reservations of "
        "type INVOICE or category OWNER / BLOCK (shown, never sold; BLOCK reservations count here, "
        "the out-of-order periods of operations tasks in out_of_order_nights).",
        "held_nights": "Stay nights of held guest reservations (REQUEST 10, OPTIONAL 11); not sold.",
        "occupancy": f"Occupancy = nights_sold / nights_available. {_RATIO}.",
        "available_occupancy": "Available (adjusted, vacation-rental) occupancy = nights_sold / "
        f"(nights_available - owner_hold_nights). {_RATIO}.",
        **OCCUPANCY_SUPPLY,
    },
    "marts.allotment_pickup": ALLOTMENT_PICKUP,
    "marts.orphan_nights": ORPHAN_NIGHTS,
    "marts.revenue_daily": {
        "date_day": COMMON["date_day"],
        "location_id": COMMON["location_id"],
        "accommodation_type_id": COMMON["accommodation_type_id"],
        "currency_code": COMMON["currency_code"] + " Every night x location x accommodation "
        "type has a row in every reporting currency (each location's company currency and every "
        "currency sold), with zeros where that currency sold nothing.",
        "room_revenue_gross": "Room (rent) revenue INCLUDING VAT, as billed: bill item lines of "
        "type 10 with resource type ACCOMMODATIONTYPE or SPECIAL (discounts) of " + _SOLD + ", "
        f"allocated to nights in integer cents by the lines' own periods. {_MONEY}.",
        "room_revenue_net": "Room revenue EXCLUDING VAT (the metrics.md / USALI room revenue): "
        f"room_revenue_gross less {_VAT}. {_MONEY}.",
        "room_vat": f"room_revenue_gross - room_revenue_net: {_VAT}. {_MONEY}.",
        "total_revenue_gross": "Total revenue including VAT = room_revenue_gross + EXTRA item "
        "lines (types 10, 20) and stay articles (130), same allocation; tourist tax (250) is "
        f"never revenue. {_MONEY}.",
        "total_revenue_net": f"Total revenue excluding VAT (same rule per line). {_MONEY}.",
        "total_vat": f"total_revenue_gross - total_revenue_net. {_MONEY}.",
        "commission_gross": "Commission including its VAT: COMMISSION 100 + COMMISSION_VAT 110 "
        f"lines (agent bill) of the same reservations, same allocation. {_MONEY}.",
        "commission_net": f"Commission excluding VAT: the COMMISSION 100 lines only. {_MONEY}.",
        "room_revenue_after_commission_gross": "room_revenue_gross - commission_gross (the "
        f"metrics.md 'net revenue' of commission, VAT included). {_MONEY}.",
        "room_revenue_after_commission_net": "room_revenue_net - commission_net (after commission, "
        f"VAT excluded). {_MONEY}.",
        "cancellation_revenue": "Retained cancellation revenue: the CANCEL_COMPENSATION lines "
        "(190) of cancelled (CANCELLED -12, DEF_CANCELLED -13) guest stays, allocated in integer "
        "cents to the nights they cancelled (the line's own period). A measure of its own: not in "
        f"room, total or net revenue, ADR, RevPAR or TRevPAR. {_MONEY}.",
        "nights_sold": "Nights sold of the reservations in this currency.",
        "nights_available": "Nights available of the location x accommodation type, on every "
        "currency's row of the key (never sum across currencies).",
        "adr_gross": f"ADR including VAT = room_revenue_gross / nights_sold, {_DIV}.",
        "adr_net": f"ADR excluding VAT = room_revenue_net / nights_sold, {_DIV}.",
        "revpar_gross": f"RevPAR including VAT = room_revenue_gross / nights_available, {_DIV}. "
        + _REVPAR_SUM,
        "revpar_net": f"RevPAR excluding VAT = room_revenue_net / nights_available, {_DIV}. "
        + _REVPAR_SUM,
        "trevpar_gross": f"TRevPAR including VAT = total_revenue_gross / nights_available, {_DIV}. "
        + _REVPAR_SUM,
        "trevpar_net": f"TRevPAR excluding VAT = total_revenue_net / nights_available, {_DIV}. "
        + _REVPAR_SUM,
        "adr_after_commission_gross": "Net-of-commission ADR (metrics.md 'net ADR'), VAT "
        f"included = room_revenue_after_commission_gross / nights_sold, {_DIV}.",
        "adr_after_commission_net": "Net-of-commission ADR, VAT excluded = "
        f"room_revenue_after_commission_net / nights_sold, {_DIV}.",
        "revpar_after_commission_gross": "Net-of-commission RevPAR (metrics.md 'net RevPAR'), "
        f"VAT included = room_revenue_after_commission_gross / nights_available, {_DIV}. "
        + _REVPAR_SUM,
        "revpar_after_commission_net": "Net-of-commission RevPAR, VAT excluded = "
        f"room_revenue_after_commission_net / nights_available, {_DIV}. " + _REVPAR_SUM,
    },
    "marts.channel_mix_monthly": {
        "month_start": "Month of the stay nights.",
        "distribution_channel_id": COMMON["distribution_channel_id"],
        "distribution_channel_code": "Code of the channel.",
        "channel_type": "DIRECT, RESELLER or TOUROPERATOR.",
        "currency_code": COMMON["currency_code"],
        "nights_sold": f"Nights sold (metrics.md) in the month: {_SOLD}.",
        "room_revenue_gross": f"Room revenue including VAT allocated to the month's nights. {_MONEY}.",
        "room_revenue_net": f"Room revenue excluding VAT ({_VAT}). {_MONEY}.",
        "total_revenue_gross": f"Total revenue including VAT. {_MONEY}.",
        "total_revenue_net": f"Total revenue excluding VAT. {_MONEY}.",
        "commission_gross": f"Commission including its VAT (lines 100 + 110). {_MONEY}.",
        "commission_net": f"Commission excluding VAT (lines 100). {_MONEY}.",
        "nights_share": "Channel mix: share of the month's nights sold (all channels, all "
        f"currencies). {_RATIO}.",
        "room_revenue_share": "Channel mix: share of the month's room_revenue_net in this "
        f"currency. {_RATIO}.",
    },
    "marts.booking_pace": BOOKING_PACE,
    **SALES_MARTS,
    "marts.cancellations_monthly": {
        "month_start": "Month: booking month for the creation columns, arrival month for the "
        "arrival columns, cancellation month (cancelDate) for the cancellation columns.",
        "location_id": COMMON["location_id"],
        "currency_code": COMMON["currency_code"],
        "reservations_created": "Guest reservations (any status) with reservationDate in the month.",
        "reservations_cancelled": "Of those, now CANCELLED (-12) or DEF_CANCELLED (-13).",
        "reservations_declined": "Of those, now DECLINED (-10) (beside the rate, not in it).",
        "reservations_expired": "Of those, now EXPIRED (-11) (beside the rate, not in it).",
        "reservations_on_the_books": "Of those, now on the books.",
        "cancellation_rate": f"Cancellation rate = reservations_cancelled / reservations_created. {_RATIO}.",
        "decline_rate": f"reservations_declined / reservations_created. {_RATIO}.",
        "expiry_rate": f"reservations_expired / reservations_created. {_RATIO}.",
        "avg_lead_time_days": "Lead time = arrivalDate - reservationDate in days, averaged per "
        "booking over the on-the-books reservations booked in the month (by booking date).",
        "arrivals": "On-the-books guest reservations arriving in the month.",
        "arrival_stay_nights": "Their stay nights (departure - arrival).",
        "alos": f"ALOS = arrival_stay_nights / arrivals, by arrival date. {_RATIO}.",
        "cancellations": "Guest reservations now cancelled (-12, -13) whose cancelDate falls in "
        "the month (by cancellation month; reservations_cancelled counts by booking month).",
        "cancelled_value": "Cancelled value: what those bookings were worth when cancelled, the "
        "booked revenue (room, discounts, extras; VAT included, tourist tax left out) that the "
        "journals reversed at the cancellation: minus the net of each one's latest entry per "
        f"revenue ledger, the cancellation ledger (8300) left out. {_MONEY}.",
        "retained_cancellation_revenue": "Retained cancellation revenue: the cancellation "
        "compensation those bookings keep (bill line 190, revenue_class 'cancellation'; the "
        "policy's share of the cancelled value, at most what had been paid, the rest refunded). "
        f"Revenue of its own, never room or total revenue. {_MONEY}.",
        "retained_share": f"retained_cancellation_revenue / cancelled_value. {_RATIO}.",
    },
    "marts.rate_availability_daily": {
        "date_day": COMMON["date_day"],
        "accommodation_type_id": COMMON["accommodation_type_id"],
        "location_id": COMMON["location_id"],
        "rate_type_id": "Rate type (price list); for realised figures the rate type of the "
        "accommodation reserved resource.",
        "currency_code": COMMON["currency_code"],
        "list_price": RATE_AVAILABILITY["list_price"],
        "nights_sold": f"Nights sold at this rate type: {_SOLD}.",
        **{k: v for k, v in RATE_AVAILABILITY.items() if k != "list_price"},
        "nights_available": "Nights available of the accommodation type on D (all locations).",
        "remaining_units": "Units left to sell on D = nights_available - nights sold - owner / "
        "hold nights - held nights (all rate types).",
        "service_available_units": "The service's availability index: the largest "
        "availableUnits (else the count of its units[]) of the arrivals on D over the durations "
        "extracted.",
    },
    "marts.finance_journal_monthly": {
        "company_id": COMMON["company_id"],
        "ledger_number": "Ledger (account) number; 8xxx are revenue ledgers.",
        "month_start": "Month of the mutation date.",
        "currency_code": "Currency of the journal report (else the company's).",
        "is_revenue_ledger": "Ledger number starts with 8.",
        "entry_count": "Journal entries.",
        "debit_vat_included": "Sum of debit amounts including VAT.",
        "credit_vat_included": "Sum of credit amounts including VAT.",
        "debit_vat_excluded": "Sum of debit amounts excluding VAT.",
        "credit_vat_excluded": "Sum of credit amounts excluding VAT.",
        "net_vat_included": "credit - debit, VAT included (= revenue on revenue ledgers).",
        "net_vat_excluded": "credit - debit, VAT excluded.",
    },
    "marts.cash_clearance_daily": {
        "clearance_date": "Date of the cash clearance.",
        "company_id": COMMON["company_id"],
        "location_id": COMMON["location_id"],
        "currency_code": "Currency of the cash account.",
        "clearance_count": "Clearances.",
        "expected_amount": "Sum of expected amounts.",
        "counted_cash": "Sum of counted cash.",
        "counted_card": "Sum of counted card payments.",
        "counted_cheque": "Sum of counted cheques.",
        "counted_ancv": "Sum of counted ANCV vouchers.",
        "counted_total": "counted cash + card + cheque + ANCV.",
        "difference": "Sum of the service's differences (counted total - expected).",
        "clearances_with_difference": "Clearances whose difference is not zero.",
    },
    "marts.revenue_reconciliation": {
        "company_id": COMMON["company_id"],
        "month_start": "Month: booking month (bill side; cancellation month for cancellation "
        "compensation) and mutation month (journal side).",
        "currency_code": COMMON["currency_code"],
        "bill_revenue": "Item lines (10, 20) of on-the-books reservations by booking month, VAT "
        "included as on the journal side (tourist tax 250 left out), plus the cancellation "
        "compensation (190) of cancelled reservations by cancellation month.",
        "journal_revenue": "credit - debit VAT included on revenue ledgers (8xxx), by mutation month.",
        "journal_revenue_vat_excluded": "The same, VAT excluded (for reference).",
        "difference": "bill_revenue - journal_revenue (timing differences expected per month).",
        "cumulative_bill_revenue": "Running total of bill_revenue per company and currency.",
        "cumulative_journal_revenue": "Running total of journal_revenue per company and currency.",
        "cumulative_difference": "Running total of difference; the asset check tests the all-time value.",
    },
    "marts.owner_statement_monthly": OWNER_STATEMENT,
    "marts.channel_net_revenue_monthly": CHANNEL_NET_REVENUE,
    "marts.ancillary_revenue_monthly": ANCILLARY_REVENUE,
    "marts.guest_mix_monthly": GUEST_MIX,
    "marts.offer_discount_monthly": OFFER_DISCOUNT,
}

# The grain of each mart: the columns that identify a row (unique in every build; the catalogue
# page lists them and tests/warehouse/test_catalog.py checks them on a built warehouse).
GRAIN: dict[str, tuple[str, ...]] = {
    "marts.occupancy_daily": ("date_day", "location_id", "accommodation_type_id"),
    "marts.revenue_daily": ("date_day", "location_id", "accommodation_type_id", "currency_code"),
    "marts.channel_mix_monthly": ("month_start", "distribution_channel_id", "currency_code"),
    "marts.booking_pace": ("stay_date", "as_of_date", "currency_code"),
    "marts.cancellations_monthly": ("month_start", "location_id", "currency_code"),
    "marts.rate_availability_daily": (
        "date_day",
        "accommodation_type_id",
        "rate_type_id",
        "currency_code",
    ),
    "marts.finance_journal_monthly": (
        "company_id",
        "ledger_number",
        "month_start",
        "currency_code",
    ),
    "marts.cash_clearance_daily": ("clearance_date", "company_id", "location_id", "currency_code"),
    "marts.revenue_reconciliation": ("company_id", "month_start", "currency_code"),
    "marts.sales_daily": (
        "date_day",
        "location_id",
        "accommodation_type_id",
        "distribution_channel_id",
        "booking_window_days",
        "currency_code",
    ),
    "marts.forecast_daily": ("stay_date", "currency_code"),
    "marts.allotment_pickup": (
        "as_of_date",
        "stay_date",
        "accommodation_type_id",
        "distribution_channel_id",
    ),
    "marts.orphan_nights": ("date_day", "accommodation_type_id"),
    "marts.owner_statement_monthly": ("owner_id", "unit_id", "month_start", "currency_code"),
    "marts.channel_net_revenue_monthly": (
        "month_start",
        "distribution_channel_id",
        "currency_code",
    ),
    "marts.ancillary_revenue_monthly": (
        "month_start",
        "location_id",
        "currency_code",
        "addon_category_code",
    ),
    "marts.guest_mix_monthly": ("month_start", "dimension", "bucket"),
    "marts.offer_discount_monthly": ("month_start", "offer_id", "currency_code"),
}
