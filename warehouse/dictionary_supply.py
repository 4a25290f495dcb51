"""The metric dictionary's supply part: what takes a night out of sellable supply, and the
supply columns of `marts.occupancy_daily` (`warehouse.dictionary` prints them)."""

from __future__ import annotations

_RATIO = "DOUBLE ratio; null when the divisor is 0; recompute from the counts, never average it"

SELLABLE_SUPPLY: tuple[str, ...] = (
    "## Sellable supply",
    "",
    "metrics.md defines *available occupancy* as nights sold / (nights available - owner and "
    "hold nights) and counts out-of-order units out of that divisor (its example: 100 units, 5 "
    "out of order, 30 sold = 31.58 %). `marts.occupancy_daily` keeps `available_occupancy` "
    "exactly as it was (owner / hold reservations only) and adds the supply the operations area "
    "takes away, so the two are never mixed up:",
    "",
    "- **out-of-order nights**: unit nights that are available (setup and archive dates) and "
    "that an operations task takes out of order (`/operations/tasks`: `outOfOrder` true, "
    "`outOfOrderFrom` <= D < `outOfOrderTo`, status not CANCELLED), unless an owner / hold "
    "reservation already has the unit that night (it is counted there, never twice). A task "
    "that leaves the service (withdrawn works) no longer counts: its row is tombstoned;",
    "- **allotment-held nights**: units of the type still held for a channel's allotment as of "
    "the build's as_of (`marts.allotment_pickup.still_held_nights`): neither picked up by the "
    "channel's guests nor released (the release date, night - releaseDays, still ahead). Past "
    "nights hold none: every allotment night is released by then;",
    "- **sellable nights** = nights available - out-of-order nights - owner / hold nights "
    "(owner-blocked: type INVOICE or category OWNER / BLOCK) - allotment-held nights: what "
    "free sale can still sell;",
    "- **sellable occupancy** = nights sold / sellable nights: the metrics.md available "
    "occupancy with out-of-order units taken out too.",
    "",
    "Example: a type of 10 units on one night, 1 out of order, 1 owner stay, 6 guest stays, and "
    "an allotment of 2 for a tour operator whose guests picked up 1 (release date ahead): "
    "occupancy 60 %, available occupancy 6 / 9 = 66.67 %, allotment-held nights 1, sellable "
    "nights 10 - 1 - 1 - 1 = 7, sellable occupancy 6 / 7 = 85.71 %.",
    "",
)

ORPHAN_RULE: tuple[str, ...] = (
    "## Orphan nights",
    "",
    "Rentability decides which stays a type can be sold as: `/rentability/config` names, per "
    "type and period of arrival dates (startDate <= A < endDate; a config without channel holds "
    "for every channel), a `/rentability/sets` rule: the weekdays a stay may arrive on "
    "(`arrivalDays`) and its minimum length (`minDuration`). An **unsold night** is a unit "
    "night that is available (setup and archive dates), not out of order and not held by an "
    "on-the-books guest or owner / hold stay. The unsold nights of a unit form runs of "
    "consecutive nights [start, end). Night D of a run is **fillable** when some arrival A with "
    "max(start, as_of) <= A <= D is allowed (A's weekday among the rule's arrivalDays) and "
    "A + minDuration(A) <= end: a stay from A to the end of the run is long enough and covers "
    "D. Otherwise D is an **orphan night**: no allowed arrival and length can sell it (the "
    "maximum length is not a constraint here: a stay may be followed by another). Held "
    "(REQUEST, OPTIONAL) stays do not take a night; arrivals before as_of are not possible.",
    "",
    "Example: rule 'Saturday, a week' (arrival Saturday, 7 nights). A unit is free from "
    "Wednesday to the next Wednesday morning (7 nights, Wed-Tue): Wed, Thu and Fri cannot be "
    "arrival days, and a Saturday arrival leaves 4 nights (< 7): all 7 nights are orphans. Were "
    "the run 11 nights (to the Sunday morning), Saturday + 7 <= end: Wed-Fri stay orphans, "
    "Saturday to the last night are fillable.",
    "",
)

ORPHAN_NIGHTS: dict[str, str] = {
    "date_day": "The night, from the build's as_of over the next 180 nights, within the "
    "reporting range.",
    "location_id": "Location (park) of the accommodation type.",
    "accommodation_type_id": "Accommodation type of the units.",
    "unsold_nights": "Unit nights available, not out of order, with no on-the-books guest or "
    "owner / hold stay. See 'Orphan nights'.",
    "orphan_nights": "Unsold nights no allowed stay (arrival weekday, minimum length, arrival "
    "on or after as_of) could fill. See 'Orphan nights'.",
}

OCCUPANCY_SUPPLY: dict[str, str] = {
    "out_of_order_nights": "Available unit nights an operations task takes out of order "
    "(outOfOrderFrom <= D < outOfOrderTo, status not CANCELLED), not held by an owner / hold "
    "reservation (counted there). See 'Sellable supply'.",
    "allotment_held_nights": "Allotment nights still held for a channel as of the build's "
    "as_of: marts.allotment_pickup.still_held_nights of the as_of snapshot (not picked up, "
    "release date still ahead). See 'Sellable supply'.",
    "sellable_nights": "nights_available - out_of_order_nights - owner_hold_nights - "
    "allotment_held_nights: the nights free sale can still sell. Below nights_sold (even below "
    "0) when free sale sold units an allotment still holds: the allotment is oversold.",
    "sellable_occupancy": f"nights_sold / sellable_nights. {_RATIO}.",
}

ALLOTMENT_PICKUP: dict[str, str] = {
    "as_of_date": "Snapshot date: the build's as_of and the 12 weeks before it (weekly).",
    "stay_date": "The night held (startDate <= D < endDate of the allotment), within the "
    "reporting range.",
    "location_id": "Location (park) of the accommodation type.",
    "accommodation_type_id": "Accommodation type the allotment holds units of.",
    "distribution_channel_id": "Channel (tour operator, reseller) the units are held for.",
    "release_date": "stay_date - releaseDays: unsold units go back to free sale on this day "
    "(the earliest, should several allotments hold the night).",
    "held_nights": "Units held for the channel that night: the allotments' quantity as the "
    "service states it now (the lake keeps the current contract, not its history).",
    "picked_up_nights": "The channel's on-the-books guest stay nights of the type that night, "
    "booked by as_of_date (or by release_date once it passed), at most held_nights; a stay "
    "cancelled after that date still counts, as in booking_pace.",
    "released_nights": "held_nights - picked_up_nights once release_date <= as_of_date, else 0: "
    "the units given back to free sale unsold.",
    "still_held_nights": "held_nights - picked_up_nights - released_nights: units the channel "
    "can still sell (0 after the release date); occupancy_daily's allotment_held_nights.",
}
