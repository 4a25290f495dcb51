"""The ground truth of `marts.owner_statement_monthly` from the world's served records.

The statement side restates the revenue-share rule (`owner_rule.statement`) over the served
owners, reservations, reserved resources and bill lines; the journal side reads the served
OWNER_MUTATION_REPORT journals (ledger 1610, the unit by its code, the month of the report's
period), each journal row belonging to the owner whose contract on the unit overlaps the month
(the lowest ownerId if several). Keys from either side; money as two-place Decimals.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.owner_rule import contracts_by_unit, statement, unit_nights
from sandbox.world.truth_frames import cents, money_col

OWNER_STATEMENT = (
    "owner_id",
    "unit_id",
    "accommodation_type_id",
    "location_id",
    "month_start",
    "currency_code",
    "nights_rented",
    "room_revenue_gross",
    "room_revenue_net",
    "owner_share",
    "owner_use_nights",
    "journal_owner_share",
    "owner_share_difference",
)


def _next_month(d: date) -> date:
    return date(d.year + d.month // 12, d.month % 12 + 1, 1)


def _journal(world: World, contracts: dict[int, list[Any]]) -> dict[tuple[Any, ...], int]:
    reports = {
        r["journalReportId"]: r
        for r in world.records("journalreports")
        if r.get("type") == "OWNER_MUTATION_REPORT"
    }
    unit_of_code = {u["code"]: u["unitId"] for u in world.records("units") if u.get("code")}
    out: dict[tuple[Any, ...], int] = {}
    for e in world.records("journalentries"):
        rep = reports.get(e["reportId"])
        if rep is None or e.get("ledgerNumber") != "1610":
            continue
        unit = unit_of_code.get(e.get("resourceCode"))
        if unit is None:
            continue
        month = date.fromisoformat(rep["periodFrom"]).replace(day=1)
        end = _next_month(month)
        owners = [
            c["ownerId"]
            for c in contracts.get(unit, ())
            if date.fromisoformat(c["startDate"]) < end
            and (c.get("endDate") is None or date.fromisoformat(c["endDate"]) > month)
        ]
        if not owners:
            continue
        key = (min(owners), unit, month, rep.get("currencyCode"))
        net = cents(e.get("creditVatExcluded")) - cents(e.get("debitVatExcluded"))
        out[key] = out.get(key, 0) + net
    return out


def owner_statement(world: World) -> pd.DataFrame:
    contracts = contracts_by_unit(world.records("owners"))
    nights = [
        n
        for n in unit_nights(world, set(contracts))
        if n["stay_night"] or n["room"] != 0 or n["room_net"] != 0
    ]
    stmt = statement(nights, contracts)
    journal = _journal(world, contracts)
    types = {u["unitId"]: u.get("resourceId") for u in world.records("units")}
    location = {t["resourceId"]: t.get("locationId") for t in world.records("accommodationtypes")}
    zero = {"nights_rented": 0, "room": 0, "room_net": 0, "owner_share": 0, "owner_use_nights": 0}
    rows = []
    for key in sorted(stmt.keys() | journal.keys(), key=str):
        owner, unit, month, cur = key
        s = stmt.get(key, zero)
        j = journal.get(key, 0)
        rows.append(
            {
                "owner_id": owner,
                "unit_id": unit,
                "accommodation_type_id": types.get(unit),
                "location_id": location.get(types.get(unit)),
                "month_start": month,
                "currency_code": cur,
                "nights_rented": s["nights_rented"],
                "room": s["room"],
                "room_net": s["room_net"],
                "share": s["owner_share"],
                "owner_use_nights": s["owner_use_nights"],
                "journal": j,
            }
        )
    g = pd.DataFrame(rows)
    if g.empty:
        return pd.DataFrame(columns=list(OWNER_STATEMENT))
    return pd.DataFrame(
        {
            "owner_id": g["owner_id"].astype(np.int64),
            "unit_id": g["unit_id"].astype(np.int64),
            "accommodation_type_id": g["accommodation_type_id"],
            "location_id": g["location_id"],
            "month_start": g["month_start"],
            "currency_code": g["currency_code"],
            "nights_rented": g["nights_rented"].astype(np.int64),
            "room_revenue_gross": money_col(g["room"]),
            "room_revenue_net": money_col(g["room_net"]),
            "owner_share": money_col(g["share"]),
            "owner_use_nights": g["owner_use_nights"].astype(np.int64),
            "journal_owner_share": money_col(g["journal"]),
            "owner_share_difference": money_col(g["share"] - g["journal"]),
        }
    )
