"""The ground truth of the pricing marts: list prices per night and what was sellable, from the world's rates and availability.

Money here is as billed (VAT included), as the list prices are; the supply per night and type
(`supply`) also feeds the revenue marts' truth (`truth_revenue`).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth_frames import (
    WEEKDAYS,
    cents,
    div_money,
    money,
    ord_of,
)


def _rate_nights(world: World, lo: int, hi: int) -> pd.DataFrame:
    """List price per (night, type, rate type): the winning active rate of the rate rule."""
    currency = {rt["rateTypeId"]: rt["currencyCode"] for rt in world.records("ratetypes")}
    width = hi - lo + 1
    weekday = (np.arange(lo, hi + 1) - 1) % 7  # ordinal 1 (0001-01-01) is a Monday
    groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for rate in world.records("rates"):
        if rate.get("status") not in (1, None):
            continue
        groups.setdefault((rate["resourceId"], rate.get("rateTypeId")), []).append(rate)
    parts: list[pd.DataFrame] = []
    for (type_id, rate_type_id), rates in sorted(groups.items()):
        price = np.full(width, -1, dtype=np.int64)
        have = np.zeros(width, dtype=bool)
        # lowest (priority, rateId) first: later writes win, so the winner is written last
        rates.sort(
            key=lambda r: (
                r.get("priority") if r.get("priority") is not None else -(10**9),
                r["rateId"],
            )
        )
        for rate in rates:
            f = max(ord_of(rate["validFrom"]) or lo, lo) - lo
            t = min(ord_of(rate["validTo"]) or hi, hi) - lo
            if t < f:
                continue
            mask = np.zeros(width, dtype=bool)
            mask[f : t + 1] = True
            if rate.get("applicableDays") is not None:
                allowed = [WEEKDAYS.index(x) for x in rate["applicableDays"]]
                mask &= np.isin(weekday, allowed)
            price[mask] = cents(rate["value"])
            have |= mask
        idx = np.flatnonzero(have)
        parts.append(
            pd.DataFrame(
                {
                    "ord": idx + lo,
                    "type_id": type_id,
                    "rate_type_id": rate_type_id,
                    "currency_code": currency.get(rate_type_id),
                    "list_cents": price[idx],
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            columns=["ord", "type_id", "rate_type_id", "currency_code", "list_cents"]
        )
    return pd.concat(parts, ignore_index=True)


def supply(world: World, lo: int, hi: int) -> pd.DataFrame:
    """Units available per (night, type): setupDate <= D and (archivedFrom null or > D)."""
    width = hi - lo + 1
    per_type: dict[int, np.ndarray] = {}
    for unit in world.records("units"):
        arr = per_type.setdefault(unit["resourceId"], np.zeros(width + 1, dtype=np.int64))
        f = max(ord_of(unit["setupDate"]) or lo, lo)
        t = min(ord_of(unit.get("archivedFrom")) or hi + 1, hi + 1)
        if t > f:
            arr[f - lo] += 1
            arr[t - lo] -= 1
    parts = [
        pd.DataFrame({"ord": np.arange(lo, hi + 1), "type_id": t, "available": a.cumsum()[:width]})
        for t, a in sorted(per_type.items())
    ]
    if not parts:
        return pd.DataFrame(columns=["ord", "type_id", "available"])
    return pd.concat(parts, ignore_index=True)


def rate_availability(
    world: World,
    nights: pd.DataFrame,
    lo: int,
    hi: int,
    availability_start: date,
    availability_days: int,
) -> pd.DataFrame:
    key = ["ord", "type_id", "rate_type_id", "currency_code"]
    in_range = nights["ord"].between(lo, hi)
    sold = nights[nights["sold"] & in_range]
    realised = sold.groupby(key, as_index=False, dropna=False).agg(
        nights_sold=("stay_night", "sum"), room=("room", "sum")
    )
    listed = _rate_nights(world, lo, hi)
    rows = listed.merge(realised, on=key, how="outer")
    # occupancy of the type on D (all locations): supply and every reservation taking a unit
    stay = nights[nights["stay_night"] & in_range]
    taken_mask = stay["sold"] | stay["owner_hold"] | (stay["held"] & stay["guest"])
    taken = stay[taken_mask].groupby(["ord", "type_id"], as_index=False).size()
    occupancy = supply(world, lo, hi).merge(taken, on=["ord", "type_id"], how="outer")
    occupancy["available"] = occupancy["available"].fillna(0).astype(np.int64)
    occupancy["size"] = occupancy["size"].fillna(0).astype(np.int64)
    rows = rows.merge(occupancy, on=["ord", "type_id"], how="left")
    # the service's own availability index for arrivals on D, over the extracted window
    first = availability_start
    last = availability_start + timedelta(days=availability_days - 1)
    best: dict[tuple[int, int], int] = {}
    while first <= last:  # at most 31 arrival dates per call, as the endpoint
        upto = min(first + timedelta(days=30), last)
        for rec in world.availability(arrival_from=first, arrival_to=upto):
            k = (int(rec["resourceId"]), ord_of(rec["arrivalDate"]) or 0)
            # the count of available units, or (strict profile, as the notes) its units[]
            n = rec.get("availableUnits", len(rec.get("units") or ()))
            best[k] = max(best.get(k, n), n)
        first = upto + timedelta(days=1)
    types = {t["resourceId"]: t["locationId"] for t in world.records("accommodationtypes")}
    out_rows: list[dict[str, Any]] = []
    for r in rows.itertuples(index=False):
        list_cents = None if pd.isna(r.list_cents) else int(r.list_cents)
        n = 0 if pd.isna(r.nights_sold) else int(r.nights_sold)
        room = 0 if pd.isna(r.room) else int(r.room)
        adr = div_money(room, n) if not pd.isna(r.nights_sold) else None
        avail = None if pd.isna(r.available) else int(r.available)
        out_rows.append(
            {
                "date_day": date.fromordinal(int(r.ord)),
                "accommodation_type_id": int(r.type_id),
                "location_id": types.get(int(r.type_id)),
                "rate_type_id": int(r.rate_type_id),
                "currency_code": r.currency_code,
                "list_price": None if list_cents is None else money(list_cents),
                "nights_sold": n,
                "room_revenue": money(room),
                "realised_adr": adr,
                "adr_vs_list_price": (
                    None if adr is None or list_cents is None else adr - money(list_cents)
                ),
                "nights_available": avail,
                "remaining_units": None if avail is None else avail - int(r.size),
                "service_available_units": best.get((int(r.type_id), int(r.ord))),
            }
        )
    return pd.DataFrame(out_rows)
