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

from sandbox.world.seasons import CH_CODES

from .allocation import allocate_many
from .clock import cents
from .states import CANCELLED_STATES, CODES, ON_BOOKS

REVENUE_TYPES = {"ACCOMMODATIONTYPE": True, "SPECIAL": True, "EXTRA": False}  # -> is room revenue


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
    """`ground_truth()` -> {'nights', 'room_revenue', 'reservations_monthly',
    'cancellations_monthly', 'cancellation_revenue'} DataFrames (the last two from
    `truth_cancellations.TruthCancellationsMixin`)."""

    def ground_truth(self) -> dict[str, pd.DataFrame]:
        with self.lock:
            return {
                "nights": self._truth_nights(),
                "room_revenue": self._truth_revenue(),
                "reservations_monthly": self._truth_monthly(),
                "cancellations_monthly": self._truth_cancellations(),
                "cancellation_revenue": self._truth_cancellation_nights(),
            }

    def _truth_span(self) -> tuple[int, int]:
        last = max((r.dep for r in self.res.values()), default=self.ord0 + 1)
        f = self._frozen_rows()
        if len(f):
            last = max(last, int(self._fz.dep[f].max()))
        return self.ord0, max(last, self.now.toordinal() + 1)

    def _frozen_truth(self) -> dict[str, np.ndarray]:
        """The frozen (bulk, closed) reservations as arrays: rows, status, guest-ness, ..."""
        fz = self._fz
        f = self._frozen_rows()
        return {
            "rows": f,
            "status": fz.status[f].astype(np.int64) if len(f) else np.zeros(0, np.int64),
            "guest": fz.cat[f] <= 1 if len(f) else np.zeros(0, bool),
            "tidx": fz.tidx[f].astype(np.int64) if len(f) else np.zeros(0, np.int64),
            "arr": fz.arr[f].astype(np.int64) if len(f) else np.zeros(0, np.int64),
            "dep": fz.dep[f].astype(np.int64) if len(f) else np.zeros(0, np.int64),
        }

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
        ft = self._frozen_truth()
        if len(ft["rows"]):
            on = np.isin(ft["status"], [CODES[x] for x in ON_BOOKS])
            for arr, m in ((sold, on & ft["guest"]), (hold, on & ~ft["guest"])):
                lo = np.maximum(ft["arr"][m], d0) - d0
                hi = np.minimum(ft["dep"][m], d1) - d0
                ok = hi > lo
                np.add.at(arr, (ft["tidx"][m][ok], lo[ok]), 1)
                np.add.at(arr, (ft["tidx"][m][ok], hi[ok]), -1)
        avail = avail.cumsum(axis=1)[:, :n]
        sold = sold.cumsum(axis=1)[:, :n]
        hold = hold.cumsum(axis=1)[:, :n]
        ooo = self._truth_out_of_order(d0, d1)
        held = self._truth_allotment_held(d0, d1)
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
                "out_of_order_nights": ooo.reshape(-1),
                "allotment_held_nights": held.reshape(-1),
                "sellable_nights": (avail - ooo - hold - held).reshape(-1),
            }
        )

    def _truth_allotment_held(self, d0: int, d1: int) -> np.ndarray:
        """Allotment nights still held as of today per [type, night - d0], over the reporting
        range (`truth_supply`, from the served allotments and reservations)."""
        from sandbox.world import truth_frames, truth_supply

        first, last = truth_frames.reporting_range(self)
        return truth_supply.held_grid(
            self, self.now.date(), first.toordinal(), last.toordinal(), d0, d1
        )

    def _truth_out_of_order(self, d0: int, d1: int) -> np.ndarray:
        """Out-of-order nights per [type, night - d0], from the served operations tasks: an
        available unit night inside a task's outOfOrderFrom .. outOfOrderTo (status not
        CANCELLED), once per unit night (docs/metrics.md "Sellable supply"; owner holds never
        share a night with a period in the world, see operations.py)."""
        n = d1 - d0
        grid = np.zeros((len(self.unit_ids), n), dtype=bool)
        for task in self.records("operationtasks"):
            if not task.get("outOfOrder") or task.get("status") == "CANCELLED":
                continue
            u = self.unit_index(task["unitId"])
            lo = max(
                date.fromisoformat(task["outOfOrderFrom"]).toordinal(), d0, int(self.unit_setup[u])
            )
            hi = min(
                date.fromisoformat(task["outOfOrderTo"]).toordinal(), d1, int(self.unit_arch[u])
            )
            if hi > lo:
                grid[u, lo - d0 : hi - d0] = True
        out = np.zeros((len(self.types), n), dtype=np.int64)
        np.add.at(out, self.unit_type.astype(np.int64), grid.astype(np.int64))
        return out

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
        tix_a = np.array(tix, dtype=np.int64)
        curs_a = np.array(curs, dtype=object)
        firsts_a = np.array(firsts, dtype=np.int64)
        nights_a = np.array(nights, dtype=np.int64)
        totals_a = np.array(totals, dtype=np.int64)
        room_a = np.array(room, dtype=bool)
        fl = getattr(self, "_fz_lines", None)
        f = self._frozen_rows()
        if fl is not None and len(f):
            fz = self._fz
            j = fl["rid"].astype(np.int64) - self.t["reservations"].block.base
            ok_res = np.zeros(len(fz.live), dtype=bool)
            good = np.isin(fz.status[f], [CODES[x] for x in ON_BOOKS]) & (fz.cat[f] <= 1)
            ok_res[f[good]] = True
            m = ok_res[j] & (fl["type"] == 10) & (fl["rtype"] >= 0)
            jm = j[m]
            st = fl["start"][m].astype(np.int64)
            en = fl["end"][m].astype(np.int64)
            nostart = st == 0
            st = np.where(nostart, fz.arr[jm], st)
            en = np.where(nostart, fz.dep[jm], en)
            ch_cur = np.array([self.channels[c].currency for c in CH_CODES], dtype=object)
            tix_a = np.concatenate([tix_a, fz.tidx[jm].astype(np.int64)])
            curs_a = np.concatenate([curs_a, ch_cur[fz.ch[jm].astype(np.int64)]])
            firsts_a = np.concatenate([firsts_a, st])
            nights_a = np.concatenate([nights_a, en - st])
            line_tot = fl["value"][m].astype(np.int64) * fl["qty"][m] * fl["mult"][m]
            totals_a = np.concatenate([totals_a, line_tot])
            room_a = np.concatenate([room_a, fl["rtype"][m] <= 1])
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
        if not len(tix_a):
            return pd.DataFrame(columns=cols)
        rep, offs, val = allocate_many(totals_a, nights_a)
        is_room = room_a[rep]
        types = self.types
        df = pd.DataFrame(
            {
                "ord": firsts_a[rep] + offs,
                "tix": tix_a[rep],
                "currency_code": curs_a[rep],
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
        ft = self._frozen_truth()
        f = ft["rows"]
        if len(f):
            fz = self._fz
            g = ft["guest"]
            sel = f[g]
            stt = ft["status"][g]
            month = (fz.t0[sel] // 86_400_000).astype("datetime64[D]").astype("datetime64[M]")
            ch_id = np.array([self.channels[c].channel_id for c in CH_CODES], dtype=np.int64)
            loc = np.array([t.location_id for t in self.types], dtype=np.int64)
            df = pd.DataFrame(
                {
                    "m": month.astype(np.int64),
                    "loc": loc[fz.tidx[sel].astype(np.int64)],
                    "ch": ch_id[fz.ch[sel].astype(np.int64)],
                    "c0": 1,
                    "c1": np.isin(stt, [CODES[x] for x in CANCELLED_STATES]).astype(np.int64),
                    "c2": (stt == CODES["DECLINED"]).astype(np.int64),
                    "c3": (stt == CODES["EXPIRED"]).astype(np.int64),
                    "c4": np.isin(stt, [CODES[x] for x in ON_BOOKS]).astype(np.int64),
                }
            )
            agg = df.groupby(["m", "loc", "ch"], sort=False).sum()
            for (mo, lo, chi), vals in zip(
                agg.index.tolist(), agg.to_numpy().tolist(), strict=True
            ):
                y, mm = divmod(int(mo), 12)
                key = (date(1970 + y, mm + 1, 1), int(lo), int(chi))
                row = rows.setdefault(key, [0, 0, 0, 0, 0])
                for k in range(5):
                    row[k] += int(vals[k])
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
