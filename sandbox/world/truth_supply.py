"""Ground truth of allotment supply: `marts.allotment_pickup` and the allotment-held nights of
`marts.occupancy_daily`, from the world's served allotments and reservations (the definitions
of docs/metrics.md "Sellable supply"), independent of the warehouse SQL."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth_frames import ord_of, reservations_of

SNAPSHOT_WEEKS = 12  # as_of and the 12 weeks before it
COLUMNS = (
    "as_of_date",
    "stay_date",
    "location_id",
    "accommodation_type_id",
    "distribution_channel_id",
    "release_date",
    "held_nights",
    "picked_up_nights",
    "released_nights",
    "still_held_nights",
)


def _channel_stays(res: pd.DataFrame) -> dict[tuple[int, int, int], list[tuple[int, bool, int]]]:
    """(channel, type, night) -> [(booked, on the books, cancelled on)] of guest stays that are
    on the books or cancelled (the OTB candidates of booking_pace)."""
    cand = res[res["guest"] & (res["on_books"] | res["cancelled"]) & res["type_id"].notna()]
    out: dict[tuple[int, int, int], list[tuple[int, bool, int]]] = defaultdict(list)
    for r in cand.itertuples(index=False):
        for night in range(int(r.arrival), int(r.departure)):
            out[(int(r.channel_id), int(r.type_id), night)].append(
                (int(r.booked), bool(r.on_books), int(r.cancelled_on))
            )
    return out


def _otb(stays: list[tuple[int, bool, int]], until: int) -> int:
    return sum(
        1 for booked, on, cancelled in stays if booked <= until and (on or cancelled > until)
    )


def allotment_rows(
    world: World, as_of: date, lo: int, hi: int, weeks: int = SNAPSHOT_WEEKS
) -> pd.DataFrame:
    """allotment_pickup's rows (stay dates lo..hi, snapshots as_of - 7k for k = 0..weeks)."""
    location = {t["resourceId"]: t["locationId"] for t in world.records("accommodationtypes")}
    stays = _channel_stays(reservations_of(world))
    acc: dict[tuple[int, int, int, int], list[int]] = {}
    release: dict[tuple[int, int, int, int], int] = {}
    a0 = as_of.toordinal()
    for a in world.records("allotments"):
        quantity = a.get("quantity") or 0
        start, end = ord_of(a.get("startDate")), ord_of(a.get("endDate"))
        if quantity <= 0 or start is None or end is None:
            continue
        channel, type_id = int(a["distributionChannelId"]), int(a["resourceId"])
        for night in range(max(start, lo), min(end, hi + 1)):
            rel = night - int(a.get("releaseDays") or 0)
            found = stays.get((channel, type_id, night), [])
            for k in range(weeks + 1):
                snap = a0 - 7 * k
                picked = min(_otb(found, min(snap, rel)), quantity)
                released = quantity - picked if rel <= snap else 0
                key = (snap, night, type_id, channel)
                row = acc.setdefault(key, [0, 0, 0])
                row[0] += quantity
                row[1] += picked
                row[2] += released
                release[key] = min(release.get(key, rel), rel)
    rows: list[dict[str, Any]] = [
        {
            "as_of_date": date.fromordinal(snap),
            "stay_date": date.fromordinal(night),
            "location_id": location.get(type_id),
            "accommodation_type_id": type_id,
            "distribution_channel_id": channel,
            "release_date": date.fromordinal(release[(snap, night, type_id, channel)]),
            "held_nights": held,
            "picked_up_nights": picked,
            "released_nights": released,
            "still_held_nights": held - picked - released,
        }
        for (snap, night, type_id, channel), (held, picked, released) in acc.items()
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def allotment_held(world: World, as_of: date, lo: int, hi: int) -> dict[tuple[int, int], int]:
    """(type, night) -> allotment nights still held as of `as_of` (occupancy_daily)."""
    rows = allotment_rows(world, as_of, lo, hi, weeks=0)
    out: dict[tuple[int, int], int] = defaultdict(int)
    for r in rows.itertuples(index=False):
        out[(int(r.accommodation_type_id), r.stay_date.toordinal())] += int(r.still_held_nights)
    return dict(out)


def held_grid(world: Any, as_of: date, lo: int, hi: int, d0: int, d1: int) -> np.ndarray:
    """allotment_held as an array [type index, night - d0] over d0 .. d1 - 1."""
    grid = np.zeros((len(world.types), d1 - d0), dtype=np.int64)
    index = {t.resource_id: t.idx for t in world.types}
    for (type_id, night), n in allotment_held(world, as_of, lo, hi).items():
        if d0 <= night < d1 and type_id in index:
            grid[index[type_id], night - d0] += n
    return grid
