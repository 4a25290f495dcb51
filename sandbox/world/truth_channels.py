"""The ground truth of `marts.channel_net_revenue_monthly` from the world's served records.

Room revenue and commission per month x channel x currency as `channel_mix_monthly` counts them
(`truth_revenue`), less the commission the bills carry (COMMISSION 100 and COMMISSION_VAT 110,
allocated to nights like every line); net ADR rounded half away from zero to the cent; the
channel's commission rule (its `commissionAddons` valid on the month's first day, bounds
inclusive) for reference.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth_frames import div_money, money, money_col, months, ratio
from sandbox.world.truth_revenue import _sold_money


def _rule(addons: list[dict[str, Any]], month: date) -> float:
    day = month.isoformat()
    return float(
        sum(
            a["percentage"]
            for a in addons
            if (a.get("validFrom") is None or a["validFrom"] <= day)
            and (a.get("validTo") is None or a["validTo"] >= day)
        )
    )


def channel_net_revenue(world: World, nights: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    sold = nights[nights["sold"] & nights["ord"].between(lo, hi)].copy()
    sold["month_start"] = months(sold["ord"])
    keys = ["month_start", "channel_id", "channel_code", "channel_type", "currency_code"]
    g = _sold_money(sold, keys)
    details = getattr(world, "channel_details", None)
    addons = {
        int(c): (details(int(c)) or {}).get("commissionAddons", []) if details else []
        for c in g["channel_id"].unique()
    }
    n = g["nights_sold"].astype(np.int64)
    net = g["room"] - g["commission"]
    net_exc = g["room_net"] - g["commission_net"]
    return pd.DataFrame(
        {
            "month_start": g["month_start"],
            "distribution_channel_id": g["channel_id"].astype(np.int64),
            "distribution_channel_code": g["channel_code"],
            "channel_type": g["channel_type"],
            "currency_code": g["currency_code"],
            "nights_sold": n,
            "room_revenue_gross": money_col(g["room"]),
            "room_revenue_net": money_col(g["room_net"]),
            "commission_gross": money_col(g["commission"]),
            "commission_net": money_col(g["commission_net"]),
            "net_room_revenue_gross": money_col(net),
            "net_room_revenue_net": money_col(net_exc),
            "adr_net": [div_money(int(a), int(b)) for a, b in zip(g["room_net"], n, strict=True)],
            "net_adr_gross": [div_money(int(a), int(b)) for a, b in zip(net, n, strict=True)],
            "net_adr_net": [div_money(int(a), int(b)) for a, b in zip(net_exc, n, strict=True)],
            "commission_share_of_room": [
                ratio(money(a), money(b))
                for a, b in zip(g["commission_net"], g["room_net"], strict=True)
            ],
            "commission_percentage": [
                _rule(addons[int(c)], m)
                for c, m in zip(g["channel_id"], g["month_start"], strict=True)
            ],
        }
    )
