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
    "- **sellable nights** = nights available - out-of-order nights - owner / hold nights "
    "(owner-blocked: type INVOICE or category OWNER / BLOCK);",
    "- **sellable occupancy** = nights sold / sellable nights: the metrics.md available "
    "occupancy with out-of-order units taken out too.",
    "",
    "Example: a type of 10 units on one night, 1 out of order, 1 owner stay, 6 guest stays: "
    "occupancy 60 %, available occupancy 6 / 9 = 66.67 %, sellable nights 8, sellable occupancy "
    "6 / 8 = 75 %.",
    "",
)

OCCUPANCY_SUPPLY: dict[str, str] = {
    "out_of_order_nights": "Available unit nights an operations task takes out of order "
    "(outOfOrderFrom <= D < outOfOrderTo, status not CANCELLED), not held by an owner / hold "
    "reservation (counted there). See 'Sellable supply'.",
    "sellable_nights": "nights_available - out_of_order_nights - owner_hold_nights: the nights "
    "that could still be sold to guests.",
    "sellable_occupancy": f"nights_sold / sellable_nights. {_RATIO}.",
}
