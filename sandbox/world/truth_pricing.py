"""The ground truth of the pricing marts: list prices per night (the rate rule of
`truth_rates`) and what was sellable, from the world's rates and availability.

Money here is as billed (VAT included), as the list prices are; the supply per night and type
(`supply`) also feeds the revenue marts' truth (`truth_revenue`).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world import truth_rates
from sandbox.world.truth_frames import (
    div_money,
    money,
    ord_of,
)


def _rate_nights(world: World, lo: int, hi: int) -> pd.DataFrame:
    """List price per (night, type, rate type): what the rates charge for the night's reference
    stay (truth_rates: arriving that night for 7 nights, booked that day)."""
    currency = {rt["rateTypeId"]: rt["currencyCode"] for rt in world.records("ratetypes")}
    priced = truth_rates.price(
        truth_rates.active_rates(world), truth_rates.reference_stays(world, lo, hi)
    )
    priced = priced[priced["list_cents"].notna()]
    return pd.DataFrame(
        {
            "ord": priced["ord"].to_numpy(dtype=np.int64),
            "type_id": priced["type_id"].to_numpy(dtype=np.int64),
            "rate_type_id": priced["rate_type_id"].to_numpy(dtype=np.int64),
            "currency_code": [currency.get(int(x)) for x in priced["rate_type_id"]],
            "list_cents": priced["list_cents"].to_numpy(dtype=np.int64),
        }
    )


def _sold_list_prices(world: World, nights: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """Per key: the list prices of the nights sold (each stay night priced as its own stay)."""
    priced = truth_rates.stay_rate_nights(world, nights)
    priced = priced[priced["sold"] & priced["list_cents"].notna()]
    priced = priced.assign(list_cents=priced["list_cents"].astype(np.int64))
    return priced.groupby(key, as_index=False, dropna=False).agg(
        sold_list=("list_cents", "sum"), sold_listed=("list_cents", "size")
    )


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
    in_stay = nights[in_range & nights["stay_night"]]
    rows = rows.merge(_sold_list_prices(world, in_stay, key), on=key, how="left")
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
        sold_list = (
            None if pd.isna(r.sold_listed) else div_money(int(r.sold_list), int(r.sold_listed))
        )
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
                "sold_list_price": sold_list,
                "adr_vs_sold_list_price": (
                    None if adr is None or sold_list is None else adr - sold_list
                ),
                "nights_available": avail,
                "remaining_units": None if avail is None else avail - int(r.size),
                "service_available_units": best.get((int(r.type_id), int(r.ord))),
            }
        )
    return pd.DataFrame(out_rows)
