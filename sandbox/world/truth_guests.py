"""The ground truth of `marts.guest_mix_monthly` from the world's served records.

On-the-books guest stays by arrival month, split one dimension at a time: first or repeat stay
(the customer has a stay arriving earlier, ties by reservationId; reservations served carry the
surviving customer of a merge), the customer's countryCode (UNKNOWN when none), persons booked
(PERSON subjects), nights, days from the booking date to arrival, arrival weekday; stays, nights
and guests per bucket and the bucket's share of the month's stays.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth_frames import WEEKDAYS, month_of, ratio

LOS = ((4, None), (6, ("5-6", 5)), (7, ("7", 7)), (13, ("8-13", 8)))
WINDOWS = ((7, "0-6", 0), (14, "7-13", 7), (30, "14-29", 14), (60, "30-59", 30))
WINDOWS += ((90, "60-89", 60), (180, "90-179", 90))


def _los(n: int) -> tuple[str, int]:
    if n <= 4:
        return str(n), n
    for top, label in LOS[1:]:
        if n <= top:
            assert label is not None
            return label
    return "14+", 14


def _window(days: int) -> tuple[str, int]:
    for top, label, order in WINDOWS:
        if days < top:
            return label, order
    return "180+", 180


def guest_mix(world: World, res: pd.DataFrame) -> pd.DataFrame:
    customer = {r["reservationId"]: r.get("customerId") for r in world.records("reservations")}
    country = {c["customerId"]: c.get("countryCode") for c in world.records("customers")}
    persons: dict[int, int] = {}
    for s in world.records("subjects"):
        if s.get("type") == "PERSON":
            persons[s["reservationId"]] = persons.get(s["reservationId"], 0) + int(s["quantity"])
    sold = res[res["sold"]].copy()
    sold["customer_id"] = sold["reservation_id"].map(customer)
    sold = sold.sort_values(["customer_id", "arrival", "reservation_id"], kind="stable")
    rank = sold.groupby("customer_id", dropna=True).cumcount()
    rows: list[tuple[Any, ...]] = []
    for r, k in zip(sold.itertuples(index=False), rank.reindex(sold.index), strict=True):
        month = month_of(int(r.arrival))
        nights = int(r.departure) - int(r.arrival)
        people = persons.get(int(r.reservation_id), 0)
        cid = r.customer_id
        repeat = cid is not None and not pd.isna(cid) and not pd.isna(k) and int(k) > 0
        cc = country.get(cid) if cid is not None and not pd.isna(cid) else None
        wd = date.fromordinal(int(r.arrival)).weekday()
        party = ("6+", 6) if people >= 6 else (str(people), people)
        for dim, (bucket, order) in (
            ("guest_type", ("repeat", 1) if repeat else ("first", 0)),
            ("country", (cc or "UNKNOWN", 0)),
            ("party_size", party),
            ("length_of_stay", _los(nights)),
            ("booking_window", _window(int(r.arrival) - int(r.booked))),
            ("arrival_weekday", (WEEKDAYS[wd], wd + 1)),
        ):
            rows.append((month, dim, bucket, order, nights, people))
    df = pd.DataFrame(
        rows, columns=["month_start", "dimension", "bucket", "bucket_order", "nights", "guests"]
    )
    g = df.groupby(["month_start", "dimension", "bucket"], as_index=False).agg(
        bucket_order=("bucket_order", "first"),
        stays=("nights", "size"),
        nights=("nights", "sum"),
        guests=("guests", "sum"),
    )
    total = g.groupby(["month_start", "dimension"])["stays"].transform("sum")
    return pd.DataFrame(
        {
            "month_start": g["month_start"],
            "dimension": g["dimension"],
            "bucket": g["bucket"],
            "bucket_order": g["bucket_order"].astype(np.int64),
            "stays": g["stays"].astype(np.int64),
            "nights": g["nights"].astype(np.int64),
            "guests": g["guests"].astype(np.int64),
            "share_of_stays": [ratio(a, b) for a, b in zip(g["stays"], total, strict=True)],
        }
    )
