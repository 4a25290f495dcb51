"""The ground truth of `marts.offer_discount_monthly` from the world's served records.

A discount line is an item line whose resource is an offer (`resourceType` SPECIAL, read from the
served bill lines); its cents are spread over its nights like every line (`allocate_many`) and
summed on the sold nights of the reporting range per month x offer x currency (as a positive
discount). The stays that took an offer are the reservations whose bills carry such a line with a
non-zero total: their stays in house in the month, their stay nights and their room revenue on
the month's sold nights. Code and name from `/offers`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.allocation import allocate_many
from sandbox.world.truth_frames import money_col, months, ratio

KEYS = ["month_start", "offer_id", "currency_code"]


def offer_discounts(
    world: World, nights: pd.DataFrame, lines: pd.DataFrame, lo: int, hi: int
) -> pd.DataFrame:
    special = {
        ln["resourceId"] for ln in world.records("billlines") if ln.get("resourceType") == "SPECIAL"
    }
    offers = {o["resourceId"]: o for o in world.records("offers")}
    sold = nights[nights["sold"] & nights["ord"].between(lo, hi)].copy()
    sold["month_start"] = months(sold["ord"])
    place = ["reservation_id", "ord", "month_start", "currency_code"]

    disc = lines[
        (lines["cls"] == "room") & lines["resource_id"].isin(special) & (lines["cents"] != 0)
    ]
    gross = disc["cents"].to_numpy(dtype=np.int64)
    span = disc["nights"].to_numpy(dtype=np.int64)
    rep, offs, val = allocate_many(gross, span)
    _r, _o, net = allocate_many(gross - disc["vat"].to_numpy(dtype=np.int64), span)
    alloc = pd.DataFrame(
        {
            "reservation_id": disc["reservation_id"].to_numpy(dtype=np.int64)[rep],
            "ord": disc["first"].to_numpy(dtype=np.int64)[rep] + offs,
            "offer_id": disc["resource_id"].to_numpy(dtype=np.int64)[rep],
            "cents": val,
            "net": net,
        }
    ).merge(sold[place], on=["reservation_id", "ord"], how="inner")
    discounts = alloc.groupby(KEYS, as_index=False).agg(cents=("cents", "sum"), net=("net", "sum"))

    takers = disc[["reservation_id", "resource_id"]].drop_duplicates()
    takers = takers.rename(columns={"resource_id": "offer_id"})
    taken_nights = takers.merge(sold, on="reservation_id", how="inner")
    stay = taken_nights[taken_nights["stay_night"]]
    taken = (
        taken_nights.groupby(KEYS, as_index=False)
        .agg(room=("room", "sum"))
        .merge(
            stay.groupby(KEYS, as_index=False).agg(
                bookings=("reservation_id", "nunique"), nights=("reservation_id", "size")
            ),
            on=KEYS,
            how="left",
        )
    )
    g = taken.merge(discounts, on=KEYS, how="outer")
    for c in ("room", "bookings", "nights", "cents", "net"):
        g[c] = g[c].fillna(0).astype(np.int64)
    rows: list[dict[str, Any]] = []
    for r in g.itertuples(index=False):
        offer = offers.get(int(r.offer_id), {})
        discount = -int(r.cents)
        rows.append(
            {
                "month_start": r.month_start,
                "offer_id": int(r.offer_id),
                "offer_code": offer.get("code"),
                "offer_name": offer.get("name"),
                "currency_code": r.currency_code,
                "bookings": int(r.bookings),
                "nights": int(r.nights),
                "discount_rate": ratio(discount, int(r.room) + discount),
            }
        )
    out = pd.DataFrame(rows)
    out.insert(7, "discount_amount", money_col(-g["cents"]))
    out.insert(8, "discount_amount_net", money_col(-g["net"]))
    out.insert(9, "room_revenue", money_col(g["room"]))
    out.insert(10, "room_revenue_before_discount", money_col(g["room"] - g["cents"]))
    return out
