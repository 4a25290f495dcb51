"""The supply area sections of the page: sellable supply, orphan nights and allotment pickup
(charts and tables, from `areas.AreaData`). Each returns (key, title, intro, body) for the page
to wrap; `applies` says which of the reader's filters a section ignores."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pipelines.dashboard import area_figures as figures
from pipelines.dashboard.areas import APPLIES, FILTER_NAMES, AreaData, ignored
from pipelines.dashboard.formatting import _e, _month, _num, _pct
from pipelines.dashboard.tables import table
from pipelines.dashboard.views import Filters, Options

Charts = Callable[[dict[str, Any], str], str]
Section = tuple[str, str, str, str]


def applies(area: str, filters: Filters) -> str:
    """A visible note when the reader picked a filter this section's mart does not have."""
    skipped = ignored(area, filters)
    if not skipped:
        return ""
    has = [FILTER_NAMES[d] for d in APPLIES[area]]
    if area == "orphans":  # the next 180 nights, whatever the range
        kept = f"only the {' and '.join(has)} filters apply"
    else:
        kept = (
            f"only the {', '.join(has)} and date filters apply" if has else "only the dates apply"
        )
    return (
        f'<p class="note" data-ignored="{_e(",".join(skipped))}">Not filtered by '
        f"{_e(' or '.join(skipped))}: this section's mart has no such split; {_e(kept)}.</p>"
    )


def supply(data: AreaData, filters: Filters, charts: Charts) -> Section:
    s = data.supply
    body = applies("supply", filters)
    body += charts(
        figures.supply_occupancy(s["occupancy"], s["sellable_occupancy"]),
        "Occupancy and sellable occupancy by month",
    )
    body += charts(
        figures.supply_out_of_sale(s), "Out-of-order, owner-blocked and allotment-held nights"
    )
    by = {name: {r[0]: r for r in answer.rows} for name, answer in s.items()}
    rows = []
    for month in sorted(by["nights_available"]):
        value = {name: by[name].get(month) for name in by}
        rows.append(
            [
                _month(month),
                *(
                    _num(value[n][-1] if value[n] else None)
                    for n in (
                        "nights_available",
                        "out_of_order_nights",
                        "owner_hold_nights",
                        "allotment_held_nights",
                        "sellable_nights",
                    )
                ),
                _num(value["sellable_occupancy"][1] if value["sellable_occupancy"] else None),
                _pct(value["occupancy"][-1] if value["occupancy"] else None),
                _pct(value["sellable_occupancy"][-1] if value["sellable_occupancy"] else None),
            ]
        )
    body += table(
        [
            "Month",
            "Available",
            "Out of order",
            "Owner-blocked",
            "Allotment-held",
            "Sellable",
            "Sold",
            "Occupancy",
            "Sellable occ.",
        ],
        rows,
        caption="Unit nights by stay month",
        wide=True,
    )
    return ("supply", "Sellable supply", _SUPPLY_INTRO, body)


def orphans(data: AreaData, filters: Filters, options: Options, charts: Charts) -> Section:
    body = applies("orphans", filters)
    night = data.orphans_by_night
    body += charts(
        figures.orphans(night["unsold_nights"], night["orphan_nights"]),
        "Orphan and other unsold nights by night",
    )
    rows = []
    for type_id, orphan, unsold, share in data.orphans_by_type["orphan_share"].rows:
        if not unsold:
            continue
        rows.append(
            [options.types.get(type_id, str(type_id)), _num(unsold), _num(orphan), _pct(share)]
        )
    body += table(
        ["Accommodation type", "Unsold nights", "Orphan nights", "Orphan share"],
        rows,
        caption=f"The {len(night['unsold_nights'].rows)} nights from today on",
    )
    return ("orphans", "Orphan nights", _ORPHANS_INTRO, body)


def allotments(data: AreaData, filters: Filters, options: Options, charts: Charts) -> Section:
    body = applies("allotments", filters)
    found = [r for r in data.allotments if r[1]]
    body += charts(
        figures.allotments(found, options.channels), "Allotment nights by channel and fate"
    )
    rows = [
        [
            options.channels.get(r[0], str(r[0])),
            _num(r[1]),
            _num(r[2]),
            _num(r[3]),
            _num(r[4]),
            _pct(Decimal(r[2]) / Decimal(r[1]) if r[1] else None),
        ]
        for r in found
    ]
    when = f" as of {data.allotment_as_of:%d %b %Y}" if data.allotment_as_of else ""
    body += table(
        ["Channel", "Held", "Picked up", "Released", "Still held", "Pickup rate"],
        rows,
        caption=f"Nights of the stay dates in the range{when}",
    )
    return ("allotments", "Allotment pickup", _ALLOTMENTS_INTRO, body)


_SUPPLY_INTRO = (
    "Stay months of the range. Sellable nights are the nights available less those out of "
    "order, blocked by owners and held for channels' allotments; sellable occupancy = nights "
    "sold / nights sellable. The park and type filters apply; supply has no channel or "
    "currency."
)
_ORPHANS_INTRO = (
    "The next 180 nights from today, whatever the date range: unsold nights, and among them "
    "the orphans no stay the park's rules allow (arrival days, minimum stay) can fill. The "
    "park and type filters apply."
)
_ALLOTMENTS_INTRO = (
    "Unit nights channels hold under allotments for the stay dates of the range, in the latest "
    "snapshot: picked up by the channel's reservations, released back at the release date, or "
    "still held. The park, type and channel filters apply; allotments have no currency."
)
