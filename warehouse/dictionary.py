"""The metric dictionary: what every mart column means and which metrics.md definition it uses.

One structure feeds both the `COMMENT ON COLUMN`s the builder writes into the warehouse and
`docs/metrics.md` (regenerate with `python -m warehouse.dictionary > docs/metrics.md`; a test
keeps them in sync).
"""

from __future__ import annotations

from warehouse.dictionary_commercial import (
    ANCILLARY_REVENUE,
    CHANNEL_NET_REVENUE,
    GUEST_MIX,
    OWNER_STATEMENT,
)
from warehouse.dictionary_rates import LIST_PRICES, RATE_AVAILABILITY, RATE_EXAMPLE
from warehouse.models import discover_models

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
        "type INVOICE or category OWNER / BLOCK (shown, never sold; out-of-order blocks count here).",
        "held_nights": "Stay nights of held guest reservations (REQUEST 10, OPTIONAL 11); not sold.",
        "occupancy": f"Occupancy = nights_sold / nights_available. {_RATIO}.",
        "available_occupancy": "Available (adjusted, vacation-rental) occupancy = nights_sold / "
        f"(nights_available - owner_hold_nights). {_RATIO}.",
    },
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
    "marts.booking_pace": {
        "stay_date": "Stay night D.",
        "as_of_date": "Snapshot date A: the build's as_of (meta.build_settings: the service's "
        "date at the last lake run) and the 52 weekly snapshots before it; stay dates run from "
        "A to A + 365 days within the reporting range.",
        "currency_code": COMMON["currency_code"],
        "days_before_arrival": "D - A in days.",
        "otb_nights": "On the books as of A (metrics.md / contracts.md): stay nights D of guest "
        "stays with reservationDate <= A that are on the books now, plus cancelled ones with "
        "cancelDate > A.",
        "otb_room_revenue": f"Room revenue of those nights, {_GROSS} (today's bill-line "
        "allocation; the lake does not keep past prices of a still-current line set). "
        f"{_MONEY}.",
        "pickup_nights": "Pickup = OTB(A) - OTB(A - 7 days) for the same stay date.",
        "pickup_room_revenue": f"Pickup of room revenue vs the previous snapshot. {_MONEY}.",
        "stly_stay_date": "Same time last year: D - 364 days (weekday aligned).",
        "stly_as_of_date": "A - 364 days: the same number of days before arrival.",
        "stly_otb_nights": "OTB nights of stly_stay_date as of stly_as_of_date.",
        "stly_otb_room_revenue": f"OTB room revenue of the STLY pair. {_MONEY}.",
        "pace_nights": "Pace vs STLY = otb_nights - stly_otb_nights.",
        "pace_room_revenue": f"otb_room_revenue - stly_otb_room_revenue. {_MONEY}.",
    },
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
}


# Worked examples, printed after their mart's columns in docs/metrics.md (a warehouse test
# builds each one and checks every figure quoted).
EXAMPLES: dict[str, list[str]] = {
    "marts.cancellations_monthly": [
        "### Worked example: a cancelled booking",
        "",
        "On 2026-10-20 a guest (2 adults) books 4 nights from 2026-12-16 in EUR: rent "
        "4 x 95.00 = 380.00, final cleaning 75.00 and tourist tax 2 x 4 x 2.50 = 20.00, bill "
        "TOTAL 475.00, and pays it all. On 2026-11-01, 45 days before arrival, the guest "
        "cancels. The sandbox's policy (docs/sandbox.md) retains 50 % at 30 to 89 days out, of "
        "the bill's value without tourist tax (455.00), at most what was paid: 227.50. The bill "
        "then holds one CANCEL_COMPENSATION line (190) of 227.50: TOTAL 227.50, PAID 227.50, "
        "DUE 0.00, and the refund (`reservation.refund_given`) is 475.00 - 227.50 = 247.50. "
        "The journals reverse the 380.00 (8000) and 75.00 (8100), and the tourist tax, on "
        "2026-11-01 and credit 227.50 to the cancellation ledger 8300.",
        "",
        "- `cancellations_monthly`, month 2026-11-01, the location, EUR: cancellations 1, "
        "cancelled_value 455.00, retained_cancellation_revenue 227.50, retained_share 0.5; "
        "month 2026-10-01: reservations_created 1, reservations_cancelled 1.",
        "- `revenue_daily`: cancellation_revenue 56.88, 56.88, 56.87, 56.87 on the nights "
        "2026-12-16 to 2026-12-19 (the first nights take the extra cent); room_revenue, "
        "total_revenue, ADR and RevPAR count nothing of it.",
        "- `revenue_reconciliation`: 227.50 on the bill side in 2026-11 (the cancellation "
        "month); the journals' 455.00 in 2026-10 and -455.00 + 227.50 in 2026-11 leave no "
        "cumulative difference.",
    ],
    "marts.rate_availability_daily": RATE_EXAMPLE,
}


KPI_WINDOW_COLUMNS: dict[str, str] = {
    "currency_code": "Currency of the revenue columns (of the selling distribution channel).",
    "nights_available": "Supply nights of every unit in the window (all currencies).",
    "nights_sold": "Nights sold in the window, all currencies.",
    "occupancy": "nights_sold / nights_available.",
    "room_revenue_gross": "Room revenue of the window in this currency, VAT included.",
    "room_revenue_net": "Room revenue of the window in this currency, VAT excluded.",
    "total_revenue_gross": "Total revenue of the window in this currency, VAT included.",
    "total_revenue_net": "Total revenue of the window in this currency, VAT excluded.",
    "currency_nights_sold": "Nights sold in this currency.",
    "adr_gross": "room_revenue_gross / currency_nights_sold, to the cent.",
    "adr_net": "room_revenue_net / currency_nights_sold, to the cent.",
    "revpar_gross": "room_revenue_gross / nights_available, to the cent: the RevPAR when one "
    "currency sells, that currency's contribution to it when several do.",
    "revpar_net": "room_revenue_net / nights_available, to the cent (as revpar_gross).",
    "trevpar_gross": "total_revenue_gross / nights_available, to the cent.",
    "trevpar_net": "total_revenue_net / nights_available, to the cent.",
}


GUIDE: tuple[str, ...] = (
    "## Gross and net of VAT",
    "",
    "The service's prices include VAT (a bill's VAT line, 60, is the VAT inside its item lines), "
    "so revenue as billed is gross. metrics.md and USALI report room revenue net of taxes. Marts "
    "that carry both name every revenue figure explicitly: `_gross` = VAT included (as billed), "
    "`_net` = VAT excluded (`revenue_daily`, `channel_mix_monthly`, `marts.kpi_window`). The "
    "unsuffixed names these marts had (`room_revenue`, `adr`, `revpar`, `trevpar`, `commission`, "
    "`net_room_revenue`, `net_adr`, `net_revpar`) are gone rather than kept as aliases, so no "
    "query silently keeps reading gross figures as if they were net; 'net' of commission is now "
    "`*_after_commission_*`. Marts with a single basis (`booking_pace`, "
    "`rate_availability_daily`, `revenue_reconciliation`) and the core tables keep unsuffixed "
    "names and are gross (VAT included), as the list prices and the journals' VAT-included "
    "side are; core's `*_net` columns are VAT excluded.",
    "",
    "VAT is allocated per bill line: VAT = line total x vatRate / (100 + vatRate), rounded to "
    "the cent half away from zero (the check `bill_vat_matches_vat_line` compares their sum "
    "with each bill's VAT line); the "
    "line's net (total - VAT) is spread over its nights by the same integer-cent rule as its "
    "total, and a night's VAT is gross - net. Worked example: 3 nights billed as one rent line "
    "of 300.00 at 9 % VAT. VAT = 300.00 x 9 / 109 = 24.7706 -> 24.77; net = 275.23. Per night: "
    "gross 100.00, 100.00, 100.00; net 91.75, 91.74, 91.74 (275.23 / 3, the first night takes "
    "the spare cent); VAT 8.25, 8.26, 8.26. adr_gross = 100.00, adr_net = 275.23 / 3 = 91.74.",
    "",
    "## Aggregating RevPAR",
    "",
    "RevPAR over a window, a park or the portfolio is sum(room revenue) / sum(nights_available) "
    "over the `revenue_daily` rows of one currency; never average daily RevPAR and never add "
    "nights across currencies. Every night x location x accommodation type has a row in every "
    "reporting currency, sold or not, so a currency's sum of nights_available is the full "
    "supply. Example: a park of 10 units sells 3 GBP nights at 120.00 in a 30-night month: GBP "
    "RevPAR = 360.00 / 300 = 1.20 (not 360.00 / 30 = 12.00, the supply of the three nights "
    "alone). With several currencies, each currency's RevPAR is its contribution to the park's "
    "RevPAR. `marts.kpi_window` applies the same rule.",
    "",
    "## Which bill lines are revenue",
    "",
    "Item lines (RESERVED_RESOURCE 10, RESORT_ARTICLE 20, STAY_ARTICLE 130, CANCEL_COMPENSATION "
    "190, TAX 250) make up a bill's TOTAL (70); their revenue class says what they earn. Room "
    "revenue: lines 10 and 130 whose resource type is ACCOMMODATIONTYPE or SPECIAL (a discount "
    "on the rent). Extras: lines 10 and 20 whose resource type is EXTRA, and every other STAY_ARTICLE "
    "(130). A stay article is an article billed for the stay (bed linen, final cleaning): the "
    "notes list the type next to the add-on types and the accommodation itself is billed as a "
    "RESERVED_RESOURCE, so metrics.md counts it as add-on revenue, in total revenue and TRevPAR, "
    "never in room revenue, ADR or RevPAR, unless its resource is the accommodation. Tourist tax "
    "(250) is never revenue. WARRANT (50, a refundable deposit), WITHHOLDINGARTICLE (140) and "
    "COST_TYPE (180) are outside the TOTAL and never revenue (class `other`); should the real "
    "service count them in its TOTAL, the check `bill_items_equal_total` reports those bills.",
    "",
)


def column_docs(qualified: str) -> dict[str, str]:
    """Column comments of one model (empty for models without dictionary entries)."""
    return MARTS.get(qualified, {})


def render_markdown() -> str:
    """docs/metrics.md: the metric dictionary for analysts."""
    models = discover_models()
    out = [
        "# Metric dictionary",
        "",
        "Generated from `warehouse/dictionary.py` (`python -m warehouse.dictionary > "
        "docs/metrics.md`); the same text is in the warehouse as `COMMENT ON` (DuckDB: "
        "`select * from duckdb_columns() where schema_name = 'marts'`). Definitions follow "
        "`shared/spec/metrics.md` and `docs/contracts.md` section 2.",
        "",
        "Conventions: money is DECIMAL(18,2) in the row's `currency_code` and is allocated to "
        "nights in integer cents; ratios of money (ADR, RevPAR, ...) are rounded half away from "
        "zero to the cent; occupancy-type ratios are DOUBLE and should be recomputed from the "
        "counts, never averaged. The nightly grain covers the reporting range: the earliest "
        "arrival to the night before the latest departure (or the build's `reporting_range`).",
        "",
        *GUIDE,
        *LIST_PRICES,
    ]
    for qualified, columns in MARTS.items():
        out += [
            f"## `{qualified}`",
            "",
            models[qualified].description,
            "",
            "| column | definition |",
            "|---|---|",
        ]
        out += [f"| `{c}` | {text.replace('|', '/')} |" for c, text in columns.items()]
        out.append("")
        if qualified in EXAMPLES:
            out += [*EXAMPLES[qualified], ""]
    out += [
        "## `marts.kpi_window(lo, hi)`",
        "",
        "A table macro published with the marts: the headline KPIs over the nights `lo` to `hi` "
        "(both included), one row per currency that sold in the window (one row with a null "
        "currency when none did). The run summary and the dashboard read it; use it rather than "
        "averaging daily ratios. Example: `select * from marts.kpi_window(date '2026-10-01', "
        "date '2026-10-31')`.",
        "",
        "| column | definition |",
        "|---|---|",
    ]
    out += [f"| `{c}` | {text} |" for c, text in KPI_WINDOW_COLUMNS.items()]
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(render_markdown(), end="")
