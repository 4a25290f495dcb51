"""Ground truth for the warehouse tests, computed straight from the world's state.

Definitions: shared/spec/metrics.md and docs/contracts.md section 2 (what counts) and the bill
rules' allocation (integer cents, first r nights get the extra cent). Never served over HTTP.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from .clock import cents
from .states import CANCELLED_STATES, ON_BOOKS

REVENUE_TYPES = {"ACCOMMODATIONTYPE": True, "SPECIAL": True, "EXTRA": False}  # -> is room revenue


def allocate(total: int, first: int, nights: int) -> list[tuple[int, int]]:
    """The contract's allocation of `total` cents over `nights` nights from ordinal `first`."""
    sign = 1 if total >= 0 else -1
    base = sign * (abs(total) // nights)
    r = abs(total) - abs(base) * nights
    return [(first + k, base + (sign if k < r else 0)) for k in range(nights)]


def _dates(ords: np.ndarray) -> list[date]:
    cache: dict[int, date] = {}
    out = []
    for o in ords.tolist():
        d = cache.get(o)
        if d is None:
            d = cache[o] = date.fromordinal(o)
        out.append(d)
    return out


class TruthMixin:
    """`ground_truth()` -> {'nights', 'room_revenue', 'reservations_monthly'} DataFrames."""

    def ground_truth(self) -> dict[str, pd.DataFrame]:
        with self.lock:
            return {
                "nights": self._truth_nights(),
                "room_revenue": self._truth_revenue(),
                "reservations_monthly": self._truth_monthly(),
            }

    def _truth_span(self) -> tuple[int, int]:
        last = max((r.dep for r in self.res.values()), default=self.ord0 + 1)
        return self.ord0, max(last, self.now.toordinal() + 1)

    def _truth_nights(self) -> pd.DataFrame:
        d0, d1 = self._truth_span()
        n = d1 - d0
        nt = len(self.types)
        avail = np.zeros((nt, n + 1), dtype=np.int64)
        for u in range(len(self.unit_ids)):
            lo = max(int(self.unit_setup[u]), d0)
            hi = min(int(self.unit_arch[u]), d1)
            if hi > lo:
                ti = int(self.unit_type[u])
                avail[ti, lo - d0] += 1
                avail[ti, hi - d0] -= 1
        sold = np.zeros((nt, n + 1), dtype=np.int64)
        hold = np.zeros((nt, n + 1), dtype=np.int64)
        for r in self.res.values():
            if r.status not in ON_BOOKS:
                continue
            arr = sold if (r.guest and r.rec["type"] == "RESERVATION") else hold
            lo = max(r.arr, d0) - d0
            hi = min(r.dep, d1) - d0
            if hi > lo:
                arr[r.ti.idx, lo] += 1
                arr[r.ti.idx, hi] -= 1
        avail = avail.cumsum(axis=1)[:, :n]
        sold = sold.cumsum(axis=1)[:, :n]
        hold = hold.cumsum(axis=1)[:, :n]
        ords = np.tile(np.arange(d0, d1), nt)
        tix = np.repeat(np.arange(nt), n)
        return pd.DataFrame(
            {
                "date": _dates(ords),
                "location_id": np.array([t.location_id for t in self.types], dtype=np.int64)[tix],
                "resource_id": np.array([t.resource_id for t in self.types], dtype=np.int64)[tix],
                "nights_available": avail.reshape(-1),
                "nights_sold": sold.reshape(-1),
                "owner_hold_nights": hold.reshape(-1),
            }
        )

    def _truth_revenue(self) -> pd.DataFrame:
        tix: list[int] = []
        curs: list[str] = []
        firsts: list[int] = []
        nights: list[int] = []
        totals: list[int] = []
        room: list[bool] = []
        for r in self.res.values():
            if r.status not in ON_BOOKS or not r.guest or r.rec["type"] != "RESERVATION":
                continue
            for b in r.bills.values():
                for ln in b.items:
                    if ln["billLineType"] != 10:
                        continue
                    is_room = REVENUE_TYPES.get(ln["resourceType"])
                    if is_room is None:
                        continue
                    if ln["startDate"] is not None:
                        f = date.fromisoformat(ln["startDate"]).toordinal()
                        e = date.fromisoformat(ln["endDate"]).toordinal()
                    else:
                        f, e = r.arr, r.dep
                    tix.append(r.ti.idx)
                    curs.append(r.ch.currency)
                    firsts.append(f)
                    nights.append(e - f)
                    totals.append(cents(ln["total"]))
                    room.append(is_room)
        cols = [
            "date",
            "location_id",
            "resource_id",
            "currency_code",
            "room_revenue_cents",
            "total_revenue_cents",
            "room_revenue",
            "total_revenue",
        ]
        if not tix:
            return pd.DataFrame(columns=cols)
        n = np.array(nights, dtype=np.int64)
        tot = np.array(totals, dtype=np.int64)
        sign = np.where(tot >= 0, 1, -1)
        base = sign * (np.abs(tot) // n)
        rem = np.abs(tot) - np.abs(base) * n
        rep = np.repeat(np.arange(len(n)), n)
        offs = np.arange(len(rep)) - np.repeat(np.cumsum(n) - n, n)
        val = base[rep] + np.where(offs < rem[rep], sign[rep], 0)
        is_room = np.array(room)[rep]
        types = self.types
        df = pd.DataFrame(
            {
                "ord": np.array(firsts, dtype=np.int64)[rep] + offs,
                "tix": np.array(tix, dtype=np.int64)[rep],
                "currency_code": np.array(curs, dtype=object)[rep],
                "room_revenue_cents": np.where(is_room, val, 0),
                "total_revenue_cents": val,
            }
        )
        g = df.groupby(["ord", "tix", "currency_code"], as_index=False, sort=True)[
            ["room_revenue_cents", "total_revenue_cents"]
        ].sum()
        tixs = g["tix"].to_numpy()
        out = pd.DataFrame(
            {
                "date": _dates(g["ord"].to_numpy()),
                "location_id": np.array([t.location_id for t in types], dtype=np.int64)[tixs],
                "resource_id": np.array([t.resource_id for t in types], dtype=np.int64)[tixs],
                "currency_code": g["currency_code"].astype(object).to_numpy(),
                "room_revenue_cents": g["room_revenue_cents"].to_numpy(dtype=np.int64),
                "total_revenue_cents": g["total_revenue_cents"].to_numpy(dtype=np.int64),
            }
        )
        out["room_revenue"] = [Decimal(int(c)).scaleb(-2) for c in out["room_revenue_cents"]]
        out["total_revenue"] = [Decimal(int(c)).scaleb(-2) for c in out["total_revenue_cents"]]
        return out[cols]

    def _truth_monthly(self) -> pd.DataFrame:
        rows: dict[tuple[Any, ...], list[int]] = {}
        for r in self.res.values():
            if r.status == "INIT" or not r.guest or r.rec["type"] != "RESERVATION":
                continue
            month = date(r.created.year, r.created.month, 1)
            key = (month, r.ti.location_id, r.ch.channel_id)
            row = rows.setdefault(key, [0, 0, 0, 0, 0])
            row[0] += 1
            if r.status in CANCELLED_STATES:
                row[1] += 1
            elif r.status == "DECLINED":
                row[2] += 1
            elif r.status == "EXPIRED":
                row[3] += 1
            elif r.status in ON_BOOKS:
                row[4] += 1
        keys = sorted(rows)
        return pd.DataFrame(
            {
                "month": [k[0] for k in keys],
                "location_id": np.array([k[1] for k in keys], dtype=np.int64),
                "distribution_channel_id": np.array([k[2] for k in keys], dtype=np.int64),
                "created": np.array([rows[k][0] for k in keys], dtype=np.int64),
                "cancelled": np.array([rows[k][1] for k in keys], dtype=np.int64),
                "declined": np.array([rows[k][2] for k in keys], dtype=np.int64),
                "expired": np.array([rows[k][3] for k in keys], dtype=np.int64),
                "on_the_books": np.array([rows[k][4] for k in keys], dtype=np.int64),
            }
        )
