"""Ground truth of cancellations, from the world's own state (not from what it serves).

Cancelled guest stays (status CANCELLED / DEF_CANCELLED, type RESERVATION, category not OWNER /
BLOCK) by the month of their cancelDate, location and currency: how many, the value their bills
had when cancelled (cents of the item lines without tourist tax, as `cancellation.py` kept it)
and the compensation they retained (the bills' totals, i.e. their lines 190); and that
compensation per night of the cancelled stays (contracts.md allocation). Never served over HTTP.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from sandbox.world.seasons import CH_CODES

from .allocation import allocate_many
from .cancellation import COMPENSATION_LINE
from .clock import DAY_MS, EPOCH_ORD, cents
from .states import CANCELLED_STATES, CODES

CANCELLED_CODES = [CODES[s] for s in CANCELLED_STATES]


def _month(ms: int) -> date:
    d = date.fromordinal(EPOCH_ORD + ms // DAY_MS)
    return date(d.year, d.month, 1)


def _money(cents: Any) -> list[Decimal]:
    return [Decimal(int(c)).scaleb(-2) for c in cents]


class TruthCancellationsMixin:
    """`_truth_cancellations()` (monthly) and `_truth_cancellation_nights()` for ground_truth."""

    def _cancelled_live(self) -> list[Any]:
        return [
            r
            for r in self.res.values()
            if r.status in CANCELLED_STATES and r.guest and r.rec["type"] == "RESERVATION"
        ]

    def _cancelled_frozen(self) -> np.ndarray:
        """Positions of the frozen (bulk) cancelled guest stays."""
        f = self._frozen_rows()
        if not len(f):
            return f
        fz = self._fz
        return f[np.isin(fz.status[f], CANCELLED_CODES) & (fz.cat[f] <= 1)]

    def _frozen_compensation_lines(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The lines 190 of frozen positions `rows`: position, cents, first and end ordinal."""
        fl = self._fz_lines
        j = fl["rid"].astype(np.int64) - self.t["reservations"].block.base
        want = np.zeros(len(self._fz.live), dtype=bool)
        want[rows] = True
        m = (fl["type"] == COMPENSATION_LINE) & want[j]
        cents = fl["value"][m].astype(np.int64) * fl["qty"][m] * fl["mult"][m]
        return {
            "pos": j[m],
            "cents": cents,
            "start": fl["start"][m].astype(np.int64),
            "end": fl["end"][m].astype(np.int64),
        }

    def _truth_cancellations(self) -> pd.DataFrame:
        """month (of cancelDate), location_id, currency_code, cancellations, cancelled_value,
        retained_cancellation_revenue (cents columns and Decimal ones)."""
        rows: dict[tuple[date, int, str], list[int]] = {}

        def add(key: tuple[date, int, str], value: int, retained: int) -> None:
            row = rows.setdefault(key, [0, 0, 0])
            row[0] += 1
            row[1] += value
            row[2] += retained

        for r in self._cancelled_live():
            stamp = r.rec["cancelDate"]
            month = date.fromisoformat(stamp[:8] + "01")
            assert r.cancelled_value is not None, r.rid
            add(
                (month, r.ti.location_id, r.ch.currency),
                r.cancelled_value,
                sum(b.total for b in r.bills.values()),
            )
        sel = self._cancelled_frozen()
        if len(sel):
            fz = self._fz
            lines = self._frozen_compensation_lines(sel)
            retained = np.zeros(len(fz.live), dtype=np.int64)
            np.add.at(retained, lines["pos"], lines["cents"])
            loc = np.array([t.location_id for t in self.types], dtype=np.int64)
            cur = [self.channels[c].currency for c in CH_CODES]
            for p, t, ti, ch in zip(
                sel.tolist(),
                fz.cancel_ms[sel].tolist(),
                fz.tidx[sel].tolist(),
                fz.ch[sel].tolist(),
                strict=True,
            ):
                add((_month(t), int(loc[ti]), cur[ch]), int(fz.cancel_value[p]), int(retained[p]))
        keys = sorted(rows)
        value = [rows[k][1] for k in keys]
        kept = [rows[k][2] for k in keys]
        return pd.DataFrame(
            {
                "month": [k[0] for k in keys],
                "location_id": np.array([k[1] for k in keys], dtype=np.int64),
                "currency_code": [k[2] for k in keys],
                "cancellations": np.array([rows[k][0] for k in keys], dtype=np.int64),
                "cancelled_value_cents": np.array(value, dtype=np.int64),
                "retained_cents": np.array(kept, dtype=np.int64),
                "cancelled_value": _money(value),
                "retained_cancellation_revenue": _money(kept),
            }
        )

    def _truth_cancellation_nights(self) -> pd.DataFrame:
        """date, location_id, resource_id, currency_code, cancellation_revenue(_cents): the
        compensation of cancelled guest stays spread over the nights of its line's period."""
        tix: list[int] = []
        curs: list[str] = []
        firsts: list[int] = []
        nights: list[int] = []
        totals: list[int] = []
        for r in self._cancelled_live():
            for b in r.bills.values():
                for ln in b.items:
                    if ln["billLineType"] != COMPENSATION_LINE:
                        continue
                    f = date.fromisoformat(ln["startDate"]).toordinal()
                    e = date.fromisoformat(ln["endDate"]).toordinal()
                    tix.append(r.ti.idx)
                    curs.append(r.ch.currency)
                    firsts.append(f)
                    nights.append(max(e - f, 1))
                    totals.append(cents(ln["total"]))
        sel = self._cancelled_frozen()
        if len(sel):
            fz = self._fz
            lines = self._frozen_compensation_lines(sel)
            pos = lines["pos"]
            ch_cur = [self.channels[c].currency for c in CH_CODES]
            tix += fz.tidx[pos].astype(np.int64).tolist()
            curs += [ch_cur[c] for c in fz.ch[pos].tolist()]
            firsts += lines["start"].tolist()
            nights += np.maximum(lines["end"] - lines["start"], 1).tolist()
            totals += lines["cents"].tolist()
        t = np.array(totals, dtype=np.int64)
        keep = t != 0
        rep, offs, val = allocate_many(t[keep], np.array(nights, dtype=np.int64)[keep])
        df = pd.DataFrame(
            {
                "ord": np.array(firsts, dtype=np.int64)[keep][rep] + offs,
                "tix": np.array(tix, dtype=np.int64)[keep][rep],
                "currency_code": np.array(curs, dtype=object)[keep][rep],
                "cents": val,
            }
        )
        g = df.groupby(["ord", "tix", "currency_code"], as_index=False, sort=True)["cents"].sum()
        g = g[g["cents"] != 0]
        types = self.types
        tixs = g["tix"].to_numpy(dtype=np.int64)
        return pd.DataFrame(
            {
                "date": [date.fromordinal(int(o)) for o in g["ord"]],
                "location_id": np.array([t.location_id for t in types], dtype=np.int64)[tixs],
                "resource_id": np.array([t.resource_id for t in types], dtype=np.int64)[tixs],
                "currency_code": g["currency_code"].astype(object).to_numpy(),
                "cancellation_revenue_cents": g["cents"].to_numpy(dtype=np.int64),
                "cancellation_revenue": _money(g["cents"]),
            }
        )
