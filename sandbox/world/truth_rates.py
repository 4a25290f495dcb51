"""The ground truth's rate rule: what the rates charge for a night of a stay, from the records.

Written from the rule in docs/metrics.md ("List prices"), apart from the world's own engine
(`rate_rules`) and the warehouse SQL, so that the three can be compared. A rate applies to night
D of a stay (arrival A, N nights, booked on B) when it is active (status 1 or null) and every
bound it has holds: usageDurationFrom <= D <= usageDurationTo, D's weekday in applicableDays,
validFrom <= A <= validTo, bookdateFrom <= B <= bookdateTo, minDuration <= N <= maxDuration.
The applicable OVERRIDE (or null quantifier) ranking highest by (priority, rateId), a null
priority lowest, gives the base price; each applicable ABSOLUTE (value = amount) and RELATIVE
(value = percent of the base, rounded half away from zero to the cent on its own) ranking above
it is added; the sum is floored at 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pandas as pd

from sandbox.protocol import World
from sandbox.world.truth_frames import WEEKDAYS, cents, ord_of

REFERENCE_NIGHTS = 7  # the reference stay of a night's list price: arrives that night, 7 nights
LOWEST = -(2**62)
PRICED = ("list_cents", "base_cents", "rate_id", "priority", "adjustment_rate_ids")


@dataclass(frozen=True)
class Rate:
    rate_id: int
    priority: int
    quantifier: str
    value: Decimal
    bounds: tuple[tuple[str, int | None, int | None], ...]
    days: tuple[int, ...] | None

    @staticmethod
    def of(rec: dict[str, Any]) -> Rate:
        def ords(a: str, b: str) -> tuple[int | None, int | None]:
            return ord_of(rec.get(a)), ord_of(rec.get(b))

        bounds = (
            ("night", *ords("usageDurationFrom", "usageDurationTo")),
            ("arrival", *ords("validFrom", "validTo")),
            ("booked", *ords("bookdateFrom", "bookdateTo")),
            ("stay_nights", rec.get("minDuration"), rec.get("maxDuration")),
        )
        days = rec.get("applicableDays")
        return Rate(
            rate_id=int(rec["rateId"]),
            priority=LOWEST if rec.get("priority") is None else int(rec["priority"]),
            quantifier=rec.get("quantifier") or "OVERRIDE",
            value=Decimal(str(rec["value"])),
            bounds=tuple(b for b in bounds if b[1] is not None or b[2] is not None),
            days=None if days is None else tuple(WEEKDAYS.index(d) for d in days),
        )

    def mask(self, cols: dict[str, np.ndarray], weekday: np.ndarray) -> np.ndarray:
        m = np.ones(len(weekday), dtype=bool)
        for col, lo, hi in self.bounds:
            if lo is not None:
                m &= cols[col] >= lo
            if hi is not None:
                m &= cols[col] <= hi
        if self.days is not None:
            m &= np.isin(weekday, self.days)
        return m


def active_rates(world: World) -> dict[tuple[int, int], list[Rate]]:
    """Active rates per (accommodation type, rate type), lowest rank first."""
    out: dict[tuple[int, int], list[Rate]] = {}
    for rec in world.records("rates"):
        if rec.get("status") not in (1, None):
            continue
        out.setdefault((rec["resourceId"], rec["rateTypeId"]), []).append(Rate.of(rec))
    for rates in out.values():
        rates.sort(key=lambda r: (r.priority, r.rate_id))
    return out


def _relative(base: int, percent: Decimal) -> int:
    return int((Decimal(base) * percent / 100).quantize(Decimal(1), ROUND_HALF_UP))


def price(rates: dict[tuple[int, int], list[Rate]], stays: pd.DataFrame) -> pd.DataFrame:
    """`stays` (ord, type_id, rate_type_id, arrival, stay_nights, booked) with the PRICED
    columns added: list and base price in cents, the winning OVERRIDE (rateId, priority; null
    priority as LOWEST) and the sorted rateIds of the ABSOLUTE/RELATIVE rates added (a tuple);
    nulls (None, ()) where no OVERRIDE applies."""
    out = stays.reset_index(drop=True).copy()
    n = len(out)
    base = np.full(n, -1, dtype=np.int64)
    win = np.zeros(n, dtype=np.int64)
    prio = np.full(n, LOWEST, dtype=np.int64)
    listed: list[int | None] = [None] * n
    applied: list[tuple[int, ...]] = [()] * n
    keys = out[["type_id", "rate_type_id"]].to_numpy(dtype=np.int64)
    groups = pd.DataFrame(keys).groupby([0, 1]).indices if n else {}
    for (type_id, rate_type_id), idx in groups.items():
        key_rates = rates.get((int(type_id), int(rate_type_id)), [])
        sub = out.iloc[idx]
        cols = {c: sub[c].to_numpy(dtype=np.int64) for c in ("arrival", "stay_nights", "booked")}
        cols["night"] = sub["ord"].to_numpy(dtype=np.int64)
        weekday = (cols["night"] - 1) % 7  # ordinal 1 (0001-01-01) is a Monday
        masks = {r.rate_id: r.mask(cols, weekday) for r in key_rates}
        b = np.full(len(idx), -1, dtype=np.int64)
        w = np.zeros(len(idx), dtype=np.int64)
        p = np.full(len(idx), LOWEST, dtype=np.int64)
        for r in key_rates:  # lowest rank first: the last applicable OVERRIDE wins
            if r.quantifier == "OVERRIDE":
                m = masks[r.rate_id]
                b[m], w[m], p[m] = cents(r.value), r.rate_id, r.priority
        base[idx], win[idx], prio[idx] = b, w, p
        total = b.copy()
        used: dict[int, list[int]] = {}
        for r in key_rates:
            if r.quantifier not in ("ABSOLUTE", "RELATIVE"):
                continue
            above = (r.priority > p) | ((r.priority == p) & (r.rate_id > w))
            hit = np.flatnonzero(masks[r.rate_id] & above & (b >= 0))
            if r.quantifier == "ABSOLUTE":
                total[hit] += cents(r.value)
            else:
                total[hit] += np.array(
                    [_relative(int(x), r.value) for x in b[hit].tolist()], dtype=np.int64
                )
            for j in hit.tolist():
                used.setdefault(j, []).append(r.rate_id)
        for j, row in enumerate(idx.tolist()):
            if b[j] >= 0:
                listed[row] = max(int(total[j]), 0)
                applied[row] = tuple(sorted(used.get(j, ())))
    has = base >= 0

    def nullable(values: np.ndarray, keep: np.ndarray) -> pd.Series:
        return pd.Series(values, dtype="Int64").where(keep, pd.NA)

    out["list_cents"] = pd.array(listed, dtype="Int64")
    out["base_cents"] = nullable(base, has)
    out["rate_id"] = nullable(win, has)
    out["priority"] = nullable(prio, has & (prio != LOWEST))
    out["adjustment_rate_ids"] = applied
    return out


def reference_stays(world: World, lo: int, hi: int) -> pd.DataFrame:
    """The reference stay of every night lo..hi and (type, rate type) with rates: arriving that
    night for REFERENCE_NIGHTS nights, booked that day."""
    keys = sorted({(r["resourceId"], r["rateTypeId"]) for r in world.records("rates")})
    days = np.arange(lo, hi + 1, dtype=np.int64)
    frame = pd.DataFrame(
        {
            "ord": np.tile(days, len(keys)),
            "type_id": np.repeat([k[0] for k in keys], len(days)),
            "rate_type_id": np.repeat([k[1] for k in keys], len(days)),
        }
    )
    frame["arrival"] = frame["ord"]
    frame["stay_nights"] = REFERENCE_NIGHTS
    frame["booked"] = frame["ord"]
    return frame


def stay_rate_nights(world: World, nights: pd.DataFrame) -> pd.DataFrame:
    """core.fct_stay_rate_nights from the truth's reservation nights (`truth_frames.nights_of`):
    every stay night of a reservation with an accommodation type and rate type, priced."""
    stay = nights[
        nights["stay_night"]
        & nights["type_id"].notna()
        & nights["rate_type_id"].notna()
        & (nights["departure"] > nights["arrival"])
    ]
    frame = pd.DataFrame(
        {
            "reservation_id": stay["reservation_id"].to_numpy(dtype=np.int64),
            "ord": stay["ord"].to_numpy(dtype=np.int64),
            "type_id": stay["type_id"].to_numpy(dtype=np.int64),
            "rate_type_id": stay["rate_type_id"].to_numpy(dtype=np.int64),
            "arrival": stay["arrival"].to_numpy(dtype=np.int64),
            "stay_nights": (stay["departure"] - stay["arrival"]).to_numpy(dtype=np.int64),
            "booked": stay["booked"].to_numpy(dtype=np.int64),
            "sold": stay["sold"].to_numpy(dtype=bool),
            "currency_code": stay["currency_code"].to_numpy(),
        }
    )
    return price(active_rates(world), frame)
