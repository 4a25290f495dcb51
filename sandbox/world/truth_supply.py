"""Ground truth of supply: `marts.allotment_pickup`, the allotment-held nights of
`marts.occupancy_daily` and `marts.orphan_nights`, from the world's served allotments,
rentability, operations tasks, units and reservations (the definitions of docs/metrics.md
"Sellable supply" and "Orphan nights"), independent of the warehouse SQL."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth_frames import ord_of, reservations_of

SNAPSHOT_WEEKS = 12  # as_of and the 12 weeks before it
ORPHAN_DAYS = 180  # orphan_nights covers the nights as_of .. as_of + 179
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


def _weekday(o: int) -> str:
    return ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")[
        (o - 1) % 7
    ]


def orphan_rows(
    world: World, as_of: date, lo: int, hi: int, days: int = ORPHAN_DAYS
) -> pd.DataFrame:
    """orphan_nights' rows: per night from as_of over `days` nights (within lo..hi), location and
    type, the unsold unit nights and those no allowed stay could fill (docs/metrics.md)."""
    a0 = as_of.toordinal()
    types = {t["resourceId"]: t["locationId"] for t in world.records("accommodationtypes")}
    sets = {s["rentabilitySetId"]: s for s in world.records("rentabilitysets")}
    rules: dict[int, list[tuple[int, int, dict[str, Any]]]] = defaultdict(list)
    for c in world.records("rentabilityconfig"):
        if c.get("distributionChannelId") is not None or c["rentabilitySetId"] not in sets:
            continue
        rules[int(c["resourceId"])].append(
            (ord_of(c["startDate"]) or 0, ord_of(c["endDate"]) or 0, sets[c["rentabilitySetId"]])
        )

    def allowed(type_id: int, arrival: int) -> int | None:
        """The minimum stay of an arrival on that day, None when no rule lets it arrive."""
        for start, end, rule in rules.get(type_id, []):
            if start <= arrival < end:
                if _weekday(arrival) in (rule.get("arrivalDays") or []):
                    return int(rule.get("minDuration") or 1)
                return None
        return None

    taken: dict[int, set[int]] = defaultdict(set)
    res = reservations_of(world)
    units_of: dict[int, int] = {}
    for rr in world.records("reservedresources"):
        if rr["type"] == "ACCOMMODATIONTYPE" and rr.get("unitId") is not None:
            units_of.setdefault(rr["reservationId"], rr["unitId"])
    for r in res[res["sold"] | res["owner_hold"]].itertuples(index=False):
        unit = units_of.get(int(r.reservation_id))
        if unit is not None:
            taken[unit].update(range(int(r.arrival), int(r.departure)))
    for task in world.records("operationtasks"):
        if task.get("outOfOrder") and task.get("status") != "CANCELLED":
            first, last = ord_of(task["outOfOrderFrom"]), ord_of(task["outOfOrderTo"])
            if first is not None and last is not None:
                taken[int(task["unitId"])].update(range(first, last))
    counts: dict[tuple[int, int], list[int]] = {}
    last_night = min(a0 + days - 1, hi)
    for unit in world.records("units"):
        type_id = int(unit["resourceId"])
        setup = ord_of(unit.get("setupDate")) or lo
        archived = ord_of(unit.get("archivedFrom")) or hi + 1
        free = [
            o
            for o in range(max(lo, setup), min(hi + 1, archived))
            if o not in taken[unit["unitId"]]
        ]
        # runs of consecutive free nights [start, end)
        runs: list[tuple[int, int]] = []
        for o in free:
            if runs and runs[-1][1] == o:
                runs[-1] = (runs[-1][0], o + 1)
            else:
                runs.append((o, o + 1))
        for start, end in runs:
            if end <= a0 or start > last_night:
                continue
            first = next(
                (
                    a
                    for a in range(max(start, a0), end)
                    if (m := allowed(type_id, a)) is not None and a + m <= end
                ),
                None,
            )
            for night in range(max(start, a0), min(end, last_night + 1)):
                row = counts.setdefault((night, type_id), [0, 0])
                row[0] += 1
                row[1] += first is None or night < first
    return pd.DataFrame(
        [
            {
                "date_day": date.fromordinal(night),
                "location_id": types.get(type_id),
                "accommodation_type_id": type_id,
                "unsold_nights": unsold,
                "orphan_nights": orphans,
            }
            for (night, type_id), (unsold, orphans) in counts.items()
        ],
        columns=[
            "date_day",
            "location_id",
            "accommodation_type_id",
            "unsold_nights",
            "orphan_nights",
        ],
    )
