"""The metric dictionary's pricing part: how list prices follow the rates, the columns of
`marts.rate_availability_daily` and its worked example (`warehouse.metrics_doc` prints them)."""

from __future__ import annotations

_MONEY = "DECIMAL(18,2), in the row's currency_code"
_DIV = "rounded half away from zero to the cent; null when the divisor is 0"
_GROSS = "VAT included, as billed (like the list prices)"

LIST_PRICES: tuple[str, ...] = (
    "## List prices: how the rates price a night",
    "",
    "The service prices a stay from the rates of its accommodation type and rate type "
    "(`/accommodationtypes/{resourceId}/rates`); `core.fct_rate_nights`, "
    "`core.fct_stay_rate_nights` and the list prices of `marts.rate_availability_daily` apply "
    "the same rule, in integer cents.",
    "",
    "1. **Which rates hold.** A rate holds for night D of a stay arriving on A for N nights, "
    "booked on day B, when it is active (status 1 or null) and each bound it has is met, every "
    "bound inclusive and a missing one open: the nights window `usageDurationFrom` <= D <= "
    "`usageDurationTo`; D's weekday in `applicableDays` (null: every day); the **arrival "
    "window** `validFrom` <= A <= `validTo`; the **booking window** `bookdateFrom` <= B <= "
    "`bookdateTo`; the **length of stay** `minDuration` <= N <= `maxDuration`. The service "
    "treats `validFrom`/`validTo` as write-only, so a read may leave them out: such a rate "
    "lands in the lake with null dates (never quarantined) and holds for every arrival.",
    "2. **OVERRIDE** (also a rate without quantifier): `value` is the nightly price. Of the "
    "OVERRIDE rates that hold, the one ranking highest sets the base price: highest "
    "`priority`, then highest `rateId`; a null priority ranks lowest. None holds: no list "
    "price (null).",
    "3. **ABSOLUTE**: `value` is an amount per night in the rate type's currency, added to the "
    "base (negative: a discount). **RELATIVE**: `value` is a percent of the base price (-10 = "
    "10 % off); each RELATIVE rate's amount is base x value / 100 rounded half away from zero "
    "to the cent on its own. An ABSOLUTE or RELATIVE rate counts only when it holds and ranks "
    "above the winning OVERRIDE, so an OVERRIDE of higher priority (a promotion) replaces the "
    "price and every adjustment ranked below it. Adjustments never compound: every RELATIVE "
    "rate takes the base price, so their order does not matter.",
    "4. **List price** = base + the ABSOLUTE amounts + the RELATIVE amounts, never below "
    "0.00; `adjustment_rate_ids` lists the rates added.",
    "5. **Which stay.** A night's list price (`core.fct_rate_nights`, "
    "`rate_availability_daily.list_price`) is that of its *reference stay*: arriving that "
    "night for 7 nights, booked that same day (a booking window that closes before the "
    "arrival, or a length of stay that excludes 7 nights, does not show in it). A booked "
    "stay's nights (`core.fct_stay_rate_nights`, `rate_availability_daily.sold_list_price`) "
    "are priced with the stay's own arrival date, nights (departure - arrival, as the "
    "reservation is now) and booking date (the day of its reservationDate). After an "
    "extension the earlier nights are priced as nights of the longer stay; their bill lines "
    "keep the price they were booked at.",
    "6. Not modelled: length-of-stay rate options (every `value` is taken per night), "
    "`minDeviation`/`maxDeviation`, `repeatable` and cash-flow `duration`. The rate rule "
    "itself is the sandbox's (docs/sandbox.md, section Rates), written from "
    "real-service-notes section 5, which leaves the combination of quantifiers open.",
    "",
)

RATE_AVAILABILITY: dict[str, str] = {
    "list_price": "Nightly list price of D: what the rates charge for night D of the reference "
    "stay (arriving D for 7 nights, booked on D), by the rule under 'List prices'. " + _MONEY + ".",
    "room_revenue": f"Their room revenue, {_GROSS}. {_MONEY}.",
    "realised_adr": f"Realised ADR = room_revenue / nights_sold, {_GROSS}, {_DIV}.",
    "adr_vs_list_price": f"realised_adr - list_price. {_MONEY}.",
    "sold_list_price": "Average list price of the nights sold: each sold night priced as a "
    "night of its own stay (arrival, nights, booking date; core.fct_stay_rate_nights), summed "
    f"and divided by the nights sold that have one, {_DIV}. {_MONEY}.",
    "adr_vs_sold_list_price": "realised_adr - sold_list_price: what the guests paid against "
    f"what the rates charge for their stays (discounts, price overrides, extensions). {_MONEY}.",
}

RATE_EXAMPLE: list[str] = [
    "### Worked example: rates of every kind",
    "",
    "One accommodation type, rate type BAR in EUR, with these rates (no `validFrom`/`validTo` "
    "unless given): base OVERRIDE 100.05 (priority 1); weekend OVERRIDE 120.00 on FRI and SAT "
    "(priority 3); short stay ABSOLUTE +15.00 for at most 2 nights (priority 900); long stay "
    "RELATIVE -10 for at least 14 nights (priority 7); week package OVERRIDE 90.00 for exactly "
    "7 nights arriving 2025-03-10 to 2025-03-16 (priority 9); early booking RELATIVE -8 "
    "for arrivals 2025-03-01 to 2025-03-31 booked by 2025-01-31 (priority 10); promotion "
    "OVERRIDE 80.00 for the nights 2025-03-20 to 2025-03-22 booked from 2025-02-15 "
    "(priority 20).",
    "",
    "- 2 nights from Fri 2025-03-07, booked 2025-02-20: 120.00 + 15.00 = 135.00 a night.",
    "- 3 nights from Mon 2025-03-03: 100.05 a night (3 nights is too long for the surcharge).",
    "- 7 nights from 2025-03-10, booked 2025-02-01: the package, 90.00 every night, the "
    "weekend too; the long-stay discount would rank below it anyway.",
    "- 14 nights from 2025-03-17, booked 2025-01-15: long stay and early booking, not the "
    "promotion (booked before 2025-02-15): weekdays 100.05 - 10.01 (10.005 rounded away from "
    "zero) - 8.00 = 82.04, weekends 120.00 - 12.00 - 9.60 = 98.40.",
    "- 2 nights from Thu 2025-03-20, booked 2025-03-01: promotion and surcharge, 80.00 + 15.00 "
    "= 95.00 a night.",
    "- `rate_availability_daily` on 2025-03-20: list_price 80.00 (the promotion, for a week "
    "booked that day), nights_sold 2, sold_list_price (82.04 + 95.00) / 2 = 88.52; on "
    "2025-03-12: list_price 90.00 (the package), sold_list_price 90.00; on 2025-03-08: "
    "list_price 120.00, sold_list_price 135.00.",
]
