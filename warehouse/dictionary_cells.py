"""The descriptions of the core models that hold a mart's cells: what each reservation or stay
adds to a mart (maintained by reservation) and its sums per cell (maintained by adding what
changed), for `marts.ancillary_revenue_monthly`, `marts.cancellations_monthly`,
`marts.channel_mix_monthly` and `marts.forecast_daily` (the night sales);
`warehouse.dictionary_core` adds them to the core dictionary."""

from __future__ import annotations

_MONEY38 = "DECIMAL(38,2) (an exact sum), in the row's currency_code"

CELLS: dict[str, dict[str, str]] = {
    "core.fct_ancillary_stay_months": {
        "month_start": "Month of the stay's sold nights (reporting range).",
        "location_id": "Location of those nights.",
        "currency_code": "Currency of those nights.",
        "addon_category_code": "Add-on category of the stay's extra lines (UNCATEGORISED when "
        "the line's resource is not a known add-on); null on the row that says the stay is in "
        "house (stays 1).",
        "stays": "1 on the row without a category when the stay has a stay night in the month x "
        "location x currency (it counts once in the mart's stays), else 0.",
        "stays_with_addon": "1 when the stay is in house there and its bills carry an extra "
        "line of the category with a non-zero total, else 0.",
        "extra_line_nights": "Nights of the category's extra lines on the stay's sold nights "
        "there.",
        "extra_cents": "Their allocation in integer cents (VAT included).",
        "extra_net_cents": "The same net of VAT.",
    },
    "core.fct_ancillary_cells": {
        "month_start": "Month of the sold nights (reporting range).",
        "addon_category_code": "Add-on category (UNCATEGORISED when a line's resource is not a "
        "known add-on); null on the row of the stays in house.",
        "stays": "Row without a category: the on-the-books guest stays with a stay night in "
        "the month x location x currency; 0 on a category's row.",
        "stays_with_addon": "Of those stays, the ones whose bills carry an extra line of the "
        "category with a non-zero total.",
        "extra_line_nights": "Nights of the category's extra lines on sold nights there.",
        "extra_cents": "Their allocation in integer cents (VAT included).",
        "extra_net_cents": "The same net of VAT.",
    },
    "core.fct_unit_night_months": {
        "month_start": "Month of the unit nights.",
        "unit_nights": "Unit nights of the location in the month (reporting range).",
        "nights_available": "Of those, the available ones (the supply of metrics.md).",
    },
    "core.fct_cancellation_reservations": {
        "month_start": "A month the guest reservation counts in: its booking month (creation "
        "columns), its arrival month (arrival columns, when on the books), the month of its "
        "cancelDate (cancellation columns, when cancelled); one row when they coincide.",
        "reservations_created": "1 in its booking month when it counts as created (not INIT "
        "or DELETED, a booking date), else 0.",
        "reservations_cancelled": "1 there when it is now cancelled, else 0.",
        "reservations_declined": "1 there when it was declined, else 0.",
        "reservations_expired": "1 there when it expired, else 0.",
        "reservations_on_the_books": "1 there when it is on the books, else 0.",
        "lead_time_days": "There, its lead time in days when on the books (0 when none).",
        "lead_times": "1 there when that lead time is known (on the books), else 0: the "
        "mart's average lead time is the sum over these.",
        "arrivals": "1 in its arrival month when on the books, else 0.",
        "arrival_stay_nights": "There, its nights (0 when unknown).",
        "arrival_nights_known": "1 there when its nights are known, else 0.",
        "cancellations": "1 in the month of its cancelDate when cancelled, else 0.",
        "cancelled_value": "There, the value its bills had when cancelled: the booked revenue "
        f"its latest journal entry per revenue ledger reversed, VAT included, {_MONEY38}.",
        "retained_cancellation_revenue": "There, the cancellation compensation retained (bill "
        f"line 190), {_MONEY38}.",
    },
    "core.fct_cancellation_cells": {
        "month_start": "The month the reservations count in (booking, arrival or cancellation "
        "month, per column).",
        "reservations_created": "Guest reservations created in the month (not INIT or DELETED).",
        "reservations_cancelled": "Of those, the ones now cancelled.",
        "reservations_declined": "Of those, the ones declined.",
        "reservations_expired": "Of those, the ones expired.",
        "reservations_on_the_books": "Of those, the ones on the books.",
        "lead_time_days": "The sum of their lead times in days (on the books, where known).",
        "lead_times": "How many lead times that sums.",
        "arrivals": "On-the-books guest stays arriving in the month.",
        "arrival_stay_nights": "Their nights (where known).",
        "arrival_nights_known": "How many of them have known nights.",
        "cancellations": "Guest reservations now cancelled with a cancelDate in the month.",
        "cancelled_value": "The value their bills had when cancelled (the booked revenue the "
        f"journals reversed, VAT included), {_MONEY38}.",
        "retained_cancellation_revenue": "The cancellation compensation retained (bill line "
        f"190), {_MONEY38}.",
    },
    "core.fct_channel_months": {
        "month_start": "Month of the sold nights (reporting range).",
        "sold_nights": "Sold nights of on-the-books guest stays (stay nights or not).",
        "nights_sold": "Of those, the stay nights (the nights sold of metrics.md).",
        "room_revenue_gross": f"Their room revenue, VAT included, {_MONEY38}.",
        "room_revenue_net": f"The same, VAT excluded, {_MONEY38}.",
        "total_revenue_gross": f"Their total revenue, VAT included, {_MONEY38}.",
        "total_revenue_net": f"The same, VAT excluded, {_MONEY38}.",
        "commission_gross": f"The channel's commission on them, VAT included, {_MONEY38}.",
        "commission_net": f"The same, VAT excluded, {_MONEY38}.",
    },
    "core.fct_night_sales": {
        "date_day": "Night of the sold nights (reporting range).",
        "sold_nights": "Sold nights of on-the-books guest stays (stay nights or not).",
        "nights_sold": "Of those, the stay nights (marts.sales_daily's nights_sold summed).",
        "room_revenue_gross": f"Their room revenue, VAT included, {_MONEY38}.",
    },
}
