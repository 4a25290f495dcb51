"""docs/metrics.md, the metric dictionary for analysts: the definitions, then every mart's
columns from `warehouse.dictionary` with worked examples.

Regenerate with `python -m warehouse.metrics_doc > docs/metrics.md` (a test keeps it current).
The page is self-contained: the definitions the marts implement are stated here, not cited.
"""

from __future__ import annotations

from warehouse.dictionary import MARTS
from warehouse.dictionary_pace import PACE_HISTORY
from warehouse.dictionary_rates import LIST_PRICES, RATE_EXAMPLE
from warehouse.dictionary_supply import ORPHAN_RULE, SELLABLE_SUPPLY
from warehouse.models import discover_models

# The definitions the marts implement: the industry's (STR / CoStar glossary, HSMAI, USALI,
# vacation-rental practice) with this project's choices where it offers several.
DEFINITIONS: tuple[str, ...] = (
    "## Definitions",
    "",
    "The industry's definitions (STR / CoStar glossary, HSMAI, USALI, vacation-rental "
    "practice), with the choices this project makes where the industry offers several. Every "
    "mart column below says which one it uses.",
    "",
    "### Grain",
    "",
    "- **Stay night**: one unit (or, before a unit is assigned, one reserved accommodation) for "
    "one night D with arrivalDate <= D < departureDate. A 7-night stay is 7 stay nights; a stay "
    "that crosses a month boundary counts its nights in each month.",
    "- **Supply night (unit night available)**: one unit that exists, is not archived "
    "(`archivedFrom` null or after D) and is rentable on night D. 100 units x 31 nights = "
    "3,100.",
    "- Money is kept exactly (decimal or integer cents), never as binary floats in sums. The "
    "currency comes from the distribution channel (bill lines carry none).",
    "",
    "### Which reservations count",
    "",
    "- **On the books (sold)**: status PROVISIONAL (12), DEFINITIVE (21), CHECKED_IN (31) or "
    "CHECKED_OUT (41). OPTIONAL (11) and REQUEST (10) are reported separately as held, "
    "QUOTATION (-5) as quoted; DECLINED (-10), EXPIRED (-11), CANCELLED (-12), DEF_CANCELLED "
    "(-13), DELETED (-99) and INITIAL (0) never count as sold.",
    "- Only reservations of type RESERVATION count as guest stays. Owner use (type INVOICE or an "
    "owner category) and blocks are owner / hold nights: shown, never sold.",
    "",
    "### Metrics",
    "",
    "| metric | definition |",
    "|---|---|",
    "| nights available | supply nights in the period |",
    "| nights sold | stay nights of on-the-books guest stays in the period |",
    "| occupancy | nights sold / nights available |",
    "| available occupancy | nights sold / (nights available - owner and hold nights) "
    "(vacation-rental adjusted occupancy) |",
    "| room (rent) revenue | accommodation revenue of on-the-books reservations, allocated to "
    "nights (below), net of discounts; tourist tax excluded; net (`_net`) excludes VAT, gross "
    "(`_gross`) is as billed |",
    "| total revenue | room revenue + add-ons / extras revenue, same allocation |",
    "| ADR | room revenue / nights sold |",
    "| RevPAR | room revenue / nights available (= occupancy x ADR) |",
    "| TRevPAR | total revenue / nights available |",
    "| ALOS | stay nights / reservations, by arrival date |",
    "| lead time | arrivalDate - reservationDate (days), averaged per booking, by booking date "
    "or arrival date as stated |",
    "| cancellation rate | reservations created in the period that are now cancelled "
    "(CANCELLED, DEF_CANCELLED) / reservations created in the period; declines and expiries "
    "are reported beside it, not inside it |",
    "| channel mix | share of nights sold and of room revenue per distribution channel |",
    "| on the books (OTB) as of date A for stay date D | nights (and revenue) of reservations "
    "with reservationDate <= A and not cancelled on or before A, for stay night D |",
    "| pickup between A1 and A2 | OTB(A2) - OTB(A1) for the same stay dates |",
    "| pace vs STLY | OTB now vs OTB for the stay date 364 days earlier, at the same number of "
    "days before arrival (weekday aligned) |",
    "",
    "### Revenue allocation to nights",
    "",
    "- The bill lines themselves are allocated: an item line with startDate/endDate is spread "
    "evenly over its own nights in integer cents; a line without a period over its reserved "
    "resource's stay. The reservation total is never spread by a blended ADR, so a later "
    "extension never changes revenue of nights already reported.",
    "- Summary lines (SUBTOTAL 40, VAT 60, TOTAL 70, PAID_AMOUNT 80, DUE_AMOUNT 90, TO_PAY "
    "120, TOTAL_EXCL_TAX 260) are never revenue; they reconcile: the item lines must add up to "
    "the TOTAL line per reservation and payer (the check `bill_items_equal_total`).",
    "- Commission lines (COMMISSION 100, COMMISSION_VAT 110) give revenue after commission "
    "(room revenue - commission), reported as ADR and RevPAR after commission beside the "
    "other figures.",
    "",
    "### Worked examples the marts reproduce (tests/warehouse/test_metrics_examples.py)",
    "",
    "- 100 units for 31 nights = 3,100 nights available; 2,480 nights sold = 80.0 % occupancy.",
    "- 100 units, 5 out of order, 30 sold: occupancy 30.00 % on all units, 31.58 % on the "
    "units left available (available occupancy).",
    "- A stay of Dec 20 - Jan 5 (16 nights) billed at 100 per night puts 1,200 in December (12 "
    "nights) and 400 in January; extending it to Jan 8 at 100 per night adds 300 to January "
    "and leaves December at 1,200.",
    "",
)

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


def render_markdown() -> str:
    """docs/metrics.md: the metric dictionary for analysts."""
    models = discover_models()
    out = [
        "# Metric dictionary",
        "",
        "Generated from `warehouse/dictionary.py` (`python -m warehouse.metrics_doc > "
        "docs/metrics.md`); the same text is in the warehouse as `COMMENT ON` (DuckDB: "
        "`select * from duckdb_columns() where schema_name = 'marts'`) and in Dagster's column "
        "schema of each mart. The marts implement the definitions below (section "
        "Definitions; a column that cites metrics.md means them) and the rules of "
        "`docs/contracts.md` section 2. The other layers' columns are described in "
        "[catalog.md](catalog.md).",
        "",
        "Conventions: money is DECIMAL(18,2) in the row's `currency_code` and is allocated to "
        "nights in integer cents; ratios of money (ADR, RevPAR, ...) are rounded half away from "
        "zero to the cent; occupancy-type ratios are DOUBLE and should be recomputed from the "
        "counts, never averaged. The nightly grain covers the reporting range: the earliest "
        "arrival to the night before the latest departure (or the build's `reporting_range`).",
        "",
        *DEFINITIONS,
        *GUIDE,
        *PACE_HISTORY,
        *LIST_PRICES,
        *SELLABLE_SUPPLY,
        *ORPHAN_RULE,
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
