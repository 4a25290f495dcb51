"""The ground truth of `marts.ancillary_revenue_monthly` from the world's served records.

Extra bill lines (class `extra`, `truth_frames.lines_of`) of on-the-books guest stays, spread
over their nights like every line (`allocate_many`), summed per month x location x currency x
the category of the line's add-on (`/add-ons`; UNCATEGORISED when the resource is no known
add-on); stays in house (a stay night in the month) and those whose bills carry an extra line
of the category (non-zero total); nights available per location and month (`supply`); the
category's TRevPAR part rounded half away from zero to the cent. Every EXTRA add-on category has
a row wherever stays were in house.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.allocation import allocate_many
from sandbox.world.truth_frames import div_money, money_col, months, ratio
from sandbox.world.truth_pricing import supply

KEYS = ["month_start", "location_id", "currency_code", "addon_category_code"]
UNCATEGORISED = "UNCATEGORISED"


def ancillary_revenue(
    world: World, nights: pd.DataFrame, lines: pd.DataFrame, lo: int, hi: int
) -> pd.DataFrame:
    addons = list(world.records("addons"))
    category = {a["resourceId"]: a.get("categoryCode") or UNCATEGORISED for a in addons}
    extra_categories = sorted(
        {a.get("categoryCode") or UNCATEGORISED for a in addons if a.get("type") == "EXTRA"}
    )
    sold = nights[nights["sold"] & nights["ord"].between(lo, hi)].copy()
    sold["month_start"] = months(sold["ord"])
    place = ["reservation_id", "ord", "month_start", "location_id", "currency_code"]

    extra = lines[(lines["cls"] == "extra") & (lines["cents"] != 0)].copy()
    extra["category"] = [category.get(r, UNCATEGORISED) for r in extra["resource_id"]]
    rep, offs, val = allocate_many(
        extra["cents"].to_numpy(dtype=np.int64), extra["nights"].to_numpy(dtype=np.int64)
    )
    _r, _o, net = allocate_many(
        (extra["cents"] - extra["vat"]).to_numpy(dtype=np.int64),
        extra["nights"].to_numpy(dtype=np.int64),
    )
    alloc = pd.DataFrame(
        {
            "reservation_id": extra["reservation_id"].to_numpy(dtype=np.int64)[rep],
            "ord": extra["first"].to_numpy(dtype=np.int64)[rep] + offs,
            "addon_category_code": extra["category"].to_numpy()[rep],
            "cents": val,
            "net": net,
        }
    ).merge(sold[place], on=["reservation_id", "ord"], how="inner")
    money = alloc.groupby(KEYS, as_index=False).agg(cents=("cents", "sum"), net=("net", "sum"))

    stays = sold[sold["stay_night"]][
        ["month_start", "location_id", "currency_code", "reservation_id"]
    ].drop_duplicates()
    stay_keys = ["month_start", "location_id", "currency_code"]
    stay_counts = stays.groupby(stay_keys, as_index=False).agg(stays=("reservation_id", "size"))
    bought = extra[["reservation_id", "category"]].drop_duplicates()
    bought = bought.rename(columns={"category": "addon_category_code"})
    attached = (
        stays.merge(bought, on="reservation_id", how="inner")
        .groupby(KEYS, as_index=False)
        .agg(with_addon=("reservation_id", "size"))
    )

    location = {t["resourceId"]: t.get("locationId") for t in world.records("accommodationtypes")}
    units = supply(world, lo, hi)
    units["location_id"] = units["type_id"].map(location)
    units["month_start"] = months(units["ord"])
    avail = units.groupby(["month_start", "location_id"], as_index=False).agg(
        available=("available", "sum")
    )

    cats = pd.DataFrame({"addon_category_code": extra_categories})
    keys = pd.concat(
        [stay_counts[stay_keys].merge(cats, how="cross"), money[KEYS]], ignore_index=True
    ).drop_duplicates()
    g = (
        keys.merge(money, on=KEYS, how="left")
        .merge(stay_counts, on=stay_keys, how="left")
        .merge(attached, on=KEYS, how="left")
        .merge(avail, on=["month_start", "location_id"], how="left")
    )
    for c in ("cents", "net", "stays", "with_addon", "available"):
        g[c] = g[c].fillna(0).astype(np.int64)
    rows: list[dict[str, Any]] = []
    for r in g.itertuples(index=False):
        rows.append(
            {
                "month_start": r.month_start,
                "location_id": int(r.location_id),
                "currency_code": r.currency_code,
                "addon_category_code": r.addon_category_code,
                "stays": int(r.stays),
                "stays_with_addon": int(r.with_addon),
                "attach_rate": ratio(int(r.with_addon), int(r.stays)),
                "nights_available": int(r.available),
                "trevpar_part_gross": div_money(int(r.cents), int(r.available)),
                "trevpar_part_net": div_money(int(r.net), int(r.available)),
            }
        )
    out = pd.DataFrame(rows)
    out.insert(4, "extra_revenue_gross", money_col(g["cents"]))
    out.insert(5, "extra_revenue_net", money_col(g["net"]))
    return out
