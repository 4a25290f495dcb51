"""The metric dictionary's pace part: the columns of `marts.booking_pace`, how on the books as of
a past date follows each reservation's recorded history, and which columns depend on that
history (`warehouse.metrics_doc` prints them)."""

from __future__ import annotations

_MONEY = "DECIMAL(18,2), in the row's currency_code"
_GROSS = "VAT included, as billed (like the list prices)"
_CURRENCY = (
    "Currency of every money column of the row (from the distribution channel); "
    "figures in different currencies are never summed."
)

BOOKING_PACE: dict[str, str] = {
    "stay_date": "Stay night D.",
    "as_of_date": "Snapshot date A: the build's as_of (meta.build_settings: the service's "
    "date at the last lake run) and the 52 weekly snapshots before it; stay dates run from "
    "A to A + 365 days within the reporting range.",
    "currency_code": _CURRENCY,
    "days_before_arrival": "D - A in days.",
    "otb_nights": "On the books as of A, from history: stay nights D of guest stays whose "
    "version in force at the end of day A (core.fct_reservation_versions; a version takes "
    "effect at its modifiedDate, a cancellation not before its cancelDate) was on the books "
    "and held night D. Before a reservation's history starts (its first recorded version) "
    "today's status decides instead: reservationDate <= A and on the books now, or cancelled "
    "with cancelDate > A. = otb_nights_from_history + otb_nights_from_current_status. "
    "Depends on how long this data directory has recorded versions: a fresh full load "
    "records one version per reservation (docs/metrics.md, 'Pace from history').",
    "otb_room_revenue": f"Room revenue of those nights, {_GROSS} (today's bill-line "
    "allocation; the lake does not keep past prices of a still-current line set; a night a "
    f"past version held that the stay no longer has counts with 0). {_MONEY}.",
    "pickup_nights": "Pickup = OTB(A) - OTB(A - 7 days) for the same stay date.",
    "pickup_room_revenue": f"Pickup of room revenue vs the previous snapshot. {_MONEY}.",
    "stly_stay_date": "Same time last year: D - 364 days (weekday aligned).",
    "stly_as_of_date": "A - 364 days: the same number of days before arrival.",
    "stly_otb_nights": "OTB nights of stly_stay_date as of stly_as_of_date.",
    "stly_otb_room_revenue": f"OTB room revenue of the STLY pair. {_MONEY}.",
    "pace_nights": "Pace vs STLY = otb_nights - stly_otb_nights.",
    "pace_room_revenue": f"otb_room_revenue - stly_otb_room_revenue. {_MONEY}.",
    "otb_nights_from_history": "Part of otb_nights judged by a recorded version.",
    "otb_nights_from_current_status": "Part of otb_nights judged by today's status, for "
    "reservations whose history starts after A.",
    "otb_nights_by_current_status": "On the books as of A judged by today's status for "
    "every A (reservationDate <= A and on the books now, or cancelDate > A): the same on "
    "every run path, whatever history the data directory has recorded.",
    "otb_room_revenue_by_current_status": f"Room revenue of otb_nights_by_current_status, "
    f"{_GROSS}. {_MONEY}.",
}

# Columns whose values depend on how long the data directory has recorded reservation
# versions: the only mart columns in which an incremental warehouse may differ from a fresh
# full load of the same service (docs/metrics.md, "Pace from history").
PATH_DEPENDENT_COLUMNS: dict[str, tuple[str, ...]] = {
    "marts.booking_pace": (
        "otb_nights",
        "otb_room_revenue",
        "pickup_nights",
        "pickup_room_revenue",
        "stly_otb_nights",
        "stly_otb_room_revenue",
        "pace_nights",
        "pace_room_revenue",
        "otb_nights_from_history",
        "otb_nights_from_current_status",
    ),
}

PACE_HISTORY: tuple[str, ...] = (
    "## Pace from history",
    "",
    '`marts.booking_pace` judges "on the books as of A" from each reservation\'s history: the '
    "version in force at the end of day A (`core.fct_reservation_versions`; a version takes "
    "effect at its `modifiedDate`, a cancellation not before its `cancelDate`) decides whether "
    "the reservation was on the books then and which nights it held. A booking on the books "
    "last year and declined since stays in last year's curve; one only held (OPTIONAL) then "
    "and confirmed later does not count before its confirmation; an extension counts from the "
    "day it was made.",
    "",
    "The lake records a version each time a run reads a reservation, so history starts with "
    "the first run that saw it: a fresh full load records one version (the current one). For "
    "as-of dates before a reservation's history starts, today's status decides (booked on or "
    "before A and on the books now, or cancelled after A), as the service's own fields allow. "
    "Each row says how many of its nights each rule gave (`otb_nights_from_history`, "
    "`otb_nights_from_current_status`), and `otb_nights_by_current_status` keeps today's rule "
    "for every A: that column is the same on every run path.",
    "",
    "So an incremental warehouse and a fresh full load of the same service agree on every mart "
    "column but these, which the longer history makes more exact: "
    + ", ".join(f"`{c}`" for c in PATH_DEPENDENT_COLUMNS["marts.booking_pace"])
    + ". On the latest as-of date (every reservation's current version is in force) they agree "
    "on those too. Worked example: a reservation booked OPTIONAL on 2025-01-10 and confirmed "
    "(PROVISIONAL) on 2025-02-01, for the nights of 2025-03-07 and 08, read by runs on both "
    "dates: as of 2025-01-18 it was held, so otb_nights = 0 for those stay dates "
    "(otb_nights_by_current_status = 1 each: booked before A and on the books now); as of "
    "2025-02-01 it counts 1 each, from history. A fresh full load made after 2025-02-01 has one "
    "version, in force from 2025-02-01, and counts it as of 2025-01-18 by today's status "
    "(otb_nights_from_current_status = 1).",
    "",
)
