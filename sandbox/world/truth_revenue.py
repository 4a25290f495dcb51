"""The ground truth of the revenue marts (revenue_daily, channel_mix_monthly) from the world's
served records, gross (VAT included, as billed) and net (VAT excluded).

Each item line's VAT is total x vatRate / (100 + vatRate) to the cent (half away from zero), a
COMMISSION_VAT (110) line is all VAT; a line's net (total - VAT) is spread over its nights by the
same rule as its total (`truth_frames`). revenue_daily has a row for every night x location x
accommodation type x reporting currency (each location's company currency and every currency
sold), with the type's supply on each, so RevPAR sums correctly over any window.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth_frames import (
    dates_of,
    div_money,
    location_companies,
    money,
    money_col,
    months,
    ratio,
)
from sandbox.world.truth_pricing import supply

KEYS = ["ord", "location_id", "type_id", "currency_code"]
MONEY = ("room", "room_net", "total", "total_net", "commission", "commission_net")
REVENUE_DAILY = (
    "date_day",
    "location_id",
    "accommodation_type_id",
    "currency_code",
    "room_revenue_gross",
    "room_revenue_net",
    "room_vat",
    "total_revenue_gross",
    "total_revenue_net",
    "total_vat",
    "commission_gross",
    "commission_net",
    "room_revenue_after_commission_gross",
    "room_revenue_after_commission_net",
    "cancellation_revenue",
    "nights_sold",
    "nights_available",
    "adr_gross",
    "adr_net",
    "revpar_gross",
    "revpar_net",
    "trevpar_gross",
    "trevpar_net",
    "adr_after_commission_gross",
    "adr_after_commission_net",
    "revpar_after_commission_gross",
    "revpar_after_commission_net",
)


def _sold_money(sold: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Nights sold and money in cents (room, total, commission; gross and net) per key."""
    sold = sold.assign(
        total=sold["room"] + sold["extra"], total_net=sold["room_net"] + sold["extra_net"]
    )
    return sold.groupby(keys, as_index=False, dropna=False).agg(
        nights_sold=("stay_night", "sum"),
        room=("room", "sum"),
        room_net=("room_net", "sum"),
        total=("total", "sum"),
        total_net=("total_net", "sum"),
        commission=("commission", "sum"),
        commission_net=("commission_net", "sum"),
    )


def channel_mix(nights: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    sold = nights[nights["sold"] & nights["ord"].between(lo, hi)].copy()
    sold["month_start"] = months(sold["ord"])
    keys = ["month_start", "channel_id", "channel_code", "channel_type", "currency_code"]
    g = _sold_money(sold, keys)
    month_nights = g.groupby("month_start")["nights_sold"].transform("sum")
    month_room = g.groupby(["month_start", "currency_code"])["room_net"].transform("sum")
    return pd.DataFrame(
        {
            "month_start": g["month_start"],
            "distribution_channel_id": g["channel_id"].astype(np.int64),
            "distribution_channel_code": g["channel_code"],
            "channel_type": g["channel_type"],
            "currency_code": g["currency_code"],
            "nights_sold": g["nights_sold"].astype(np.int64),
            "room_revenue_gross": money_col(g["room"]),
            "room_revenue_net": money_col(g["room_net"]),
            "total_revenue_gross": money_col(g["total"]),
            "total_revenue_net": money_col(g["total_net"]),
            "commission_gross": money_col(g["commission"]),
            "commission_net": money_col(g["commission_net"]),
            "nights_share": [
                ratio(a, b) for a, b in zip(g["nights_sold"], month_nights, strict=True)
            ],
            # DOUBLE of each money amount, then divided (the amounts are exact to the cent)
            "room_revenue_share": [
                ratio(money(a), money(b)) for a, b in zip(g["room_net"], month_room, strict=True)
            ],
        }
    )


def _reporting_currencies(world: World, sold: pd.DataFrame) -> list[str]:
    """Each location's company currency and every currency sold."""
    currency = {c["companyId"]: c.get("currencyCode") for c in world.records("companies")}
    found = {currency.get(company) for company in location_companies(world).values()}
    found |= set(sold["currency_code"])
    return sorted(c for c in found if isinstance(c, str))


def _occupancy_keys(world: World, nights: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    """occupancy_daily's keys with their nights available: every type with units on every
    night, plus any other (night, location, type) with a stay night."""
    location = {t["resourceId"]: t["locationId"] for t in world.records("accommodationtypes")}
    units = supply(world, lo, hi)
    units["location_id"] = units["type_id"].map(location)
    key = ["ord", "location_id", "type_id"]
    stays = nights[nights["stay_night"] & nights["ord"].between(lo, hi)][key]
    keys = pd.concat([units[key], stays], ignore_index=True).drop_duplicates()
    out = keys.merge(units[[*key, "available"]], on=key, how="left")
    out["available"] = out["available"].fillna(0).astype(np.int64)
    return out


def _cancelled(world: World, lo: int, hi: int) -> pd.DataFrame:
    """Retained cancellation revenue per night x location x type x currency, in cents."""
    c = world._truth_cancellation_nights()  # type: ignore[attr-defined]
    out = pd.DataFrame(
        {
            "ord": [d.toordinal() for d in c["date"]],
            "location_id": c["location_id"].to_numpy(dtype=np.int64),
            "type_id": c["resource_id"].to_numpy(dtype=np.int64),
            "currency_code": c["currency_code"].to_numpy(dtype=object),
            "cancelled": c["cancellation_revenue_cents"].to_numpy(dtype=np.int64),
        }
    )
    return out[out["ord"].between(lo, hi)]


def revenue_daily(world: World, nights: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    sold = _sold_money(nights[nights["sold"] & nights["ord"].between(lo, hi)], KEYS)
    cancelled = _cancelled(world, lo, hi)
    occupancy = _occupancy_keys(world, nights, lo, hi)
    found = pd.concat([sold[["currency_code"]], cancelled[["currency_code"]]])
    currencies = pd.DataFrame({"currency_code": _reporting_currencies(world, found)})
    keys = pd.concat(
        [occupancy.merge(currencies, how="cross")[KEYS], sold[KEYS], cancelled[KEYS]],
        ignore_index=True,
    ).drop_duplicates()
    g = (
        keys.merge(sold, on=KEYS, how="left")
        .merge(cancelled, on=KEYS, how="left")
        .merge(occupancy, on=["ord", "location_id", "type_id"], how="left")
    )
    for c in ("nights_sold", "available", "cancelled", *MONEY):
        g[c] = g[c].fillna(0).astype(np.int64)
    g = g.sort_values(KEYS, kind="stable").reset_index(drop=True)
    rows: list[dict[str, Any]] = []
    for r in g.itertuples(index=False):
        room, room_net, total, total_net = (
            int(r.room),
            int(r.room_net),
            int(r.total),
            int(r.total_net),
        )
        after, after_net = room - int(r.commission), room_net - int(r.commission_net)
        n, a = int(r.nights_sold), int(r.available)
        rows.append(
            {
                "room_revenue_gross": money(room),
                "room_revenue_net": money(room_net),
                "room_vat": money(room - room_net),
                "total_revenue_gross": money(total),
                "total_revenue_net": money(total_net),
                "total_vat": money(total - total_net),
                "commission_gross": money(int(r.commission)),
                "commission_net": money(int(r.commission_net)),
                "room_revenue_after_commission_gross": money(after),
                "room_revenue_after_commission_net": money(after_net),
                "cancellation_revenue": money(int(r.cancelled)),
                "nights_sold": n,
                "nights_available": a,
                "adr_gross": div_money(room, n),
                "adr_net": div_money(room_net, n),
                "revpar_gross": div_money(room, a),
                "revpar_net": div_money(room_net, a),
                "trevpar_gross": div_money(total, a),
                "trevpar_net": div_money(total_net, a),
                "adr_after_commission_gross": div_money(after, n),
                "adr_after_commission_net": div_money(after_net, n),
                "revpar_after_commission_gross": div_money(after, a),
                "revpar_after_commission_net": div_money(after_net, a),
            }
        )
    out = pd.DataFrame(rows, columns=list(REVENUE_DAILY[4:]))
    out.insert(0, "date_day", dates_of(g["ord"]))
    out.insert(1, "location_id", g["location_id"].to_numpy())
    out.insert(2, "accommodation_type_id", g["type_id"].to_numpy())
    out.insert(3, "currency_code", g["currency_code"].to_numpy())
    return out[list(REVENUE_DAILY)]
