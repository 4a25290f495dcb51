"""How the world prices a night of a stay from its rates (docs/sandbox.md, "Rates").

A rate applies to night D of a stay (arrival A, N nights, booked on day B) when it is active and
D is in its usage window (`usageDurationFrom`..`usageDurationTo`), D's weekday is one of its
`applicableDays`, A is in `validFrom`..`validTo`, B in `bookdateFrom`..`bookdateTo` and N in
`minDuration`..`maxDuration` (every bound inclusive, a missing one open). Of the applicable
OVERRIDE rates the highest (priority, rateId) sets the base price; every applicable ABSOLUTE
(+/- amount) and RELATIVE (+/- percent of the base, each rounded half away from zero to the cent)
rate that ranks above that OVERRIDE adds to it; the sum is never below 0. No OVERRIDE, no price.

The unconditional OVERRIDE rates (no arrival, booking or duration bound) fill the per-night
arrays of `pricing.PricingMixin`; the others (`special`) are applied per stay here, vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NO_RANK = -(2**40)  # the priority of "no rate": below every real one
QUANTIFIERS = ("OVERRIDE", "ABSOLUTE", "RELATIVE")

Window = tuple[int | None, int | None]
OPEN: Window = (None, None)


@dataclass(frozen=True, slots=True)
class RateSpec:
    """One rate as the pricing engine sees it. `amount` is cents (OVERRIDE, ABSOLUTE) or
    hundredths of a percent (RELATIVE: -1000 = -10 %)."""

    prio: int
    rate_id: int
    quantifier: str
    amount: int
    nights: Window = OPEN  # usage window: day ordinals of the nights
    days: tuple[int, ...] | None = None  # weekday indexes (MON = 0)
    arrival: Window = OPEN
    booked: Window = OPEN
    duration: Window = OPEN

    @property
    def special(self) -> bool:
        """True unless an OVERRIDE that holds whatever the stay (goes in the per-night arrays)."""
        lo, hi = self.duration
        return (
            self.quantifier != "OVERRIDE"
            or self.arrival != OPEN
            or self.booked != OPEN
            or hi is not None
            or (lo is not None and lo > 1)
        )


LOW, HIGH = -(2**62), 2**62
KIND = {"OVERRIDE": 0, "ABSOLUTE": 1, "RELATIVE": 2}
ALL_DAYS = 0b1111111


def relative_cents(base: np.ndarray, hundredths: np.ndarray | int) -> np.ndarray:
    """base x percent / 100 in cents, rounded half away from zero (percent in hundredths)."""
    x = base.astype(np.int64) * hundredths
    return np.sign(x) * ((np.abs(x) + 5000) // 10000)


class SpecTable:
    """The special rates of every price row, padded to one width, so that any set of stay
    nights is priced with whole-array operations (no loop over rows or rates)."""

    def __init__(self, specials: dict[int, list[RateSpec]], n_rows: int) -> None:
        width = max((len(v) for v in specials.values()), default=0)
        shape = (n_rows, width + 2)  # room for a promotion or two before a rebuild
        self.valid = np.zeros(shape, dtype=bool)
        self.kind = np.zeros(shape, dtype=np.int8)
        self.amount = np.zeros(shape, dtype=np.int64)
        self.prio = np.zeros(shape, dtype=np.int64)
        self.rate_id = np.zeros(shape, dtype=np.int64)
        self.days = np.full(shape, ALL_DAYS, dtype=np.int64)
        self.bounds = {
            name: (np.full(shape, LOW, dtype=np.int64), np.full(shape, HIGH, dtype=np.int64))
            for name in ("nights", "arrival", "booked", "duration")
        }
        self.any = np.zeros(n_rows, dtype=bool)
        # per bound and slot: does any rate in that slot have the bound at all?
        self.used = {name: np.zeros(shape[1], dtype=bool) for name in (*self.bounds, "days")}
        for row, specs in specials.items():
            self.set_row(row, specs)

    def set_row(self, row: int, specs: list[RateSpec]) -> bool:
        """Put a row's special rates in place; False when they no longer fit the width."""
        if len(specs) > self.valid.shape[1]:
            return False
        for j, spec in enumerate(specs):
            self.valid[row, j] = True
            self.kind[row, j] = KIND[spec.quantifier]
            self.amount[row, j] = spec.amount
            self.prio[row, j] = spec.prio
            self.rate_id[row, j] = spec.rate_id
            if spec.days is not None:
                self.days[row, j] = sum(1 << d for d in spec.days)
                self.used["days"][j] = True
            for name, (lo_a, hi_a) in self.bounds.items():
                lo, hi = getattr(spec, name)
                lo_a[row, j] = LOW if lo is None else lo
                hi_a[row, j] = HIGH if hi is None else hi
                self.used[name][j] |= lo is not None or hi is not None
        self.any[row] = bool(specs)
        return True

    def apply(
        self,
        row: np.ndarray,
        stay: dict[str, np.ndarray],
        wd: np.ndarray,
        price: np.ndarray,
        rate: np.ndarray,
        rate_prio: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Stay nights (price row; `stay` = nights, arrival, booked, duration per night;
        weekday) whose `price`/`rate` hold the unconditional winner (-1 / 0 when none): the
        final price and the winning OVERRIDE's rateId. Slot by slot, each bound narrows the
        nights still in the running, so a rate costs little beyond the nights it fits. (A slot's
        column is gathered with `take`: `a[:, j].take(r)` is ~4x cheaper than `a[r, j]`.)"""
        hits: list[tuple[np.ndarray, np.ndarray, int]] = []  # (nights, their rows, slot)
        for j in range(self.valid.shape[1]):
            idx = np.flatnonzero(self.valid[:, j].take(row))
            r = row[idx]
            for name, (lo, hi) in self.bounds.items():
                if not len(idx):
                    break
                if not self.used[name][j]:
                    continue
                v = stay[name][idx]
                keep = (v >= lo[:, j].take(r)) & (v <= hi[:, j].take(r))
                idx, r = idx[keep], r[keep]
            if len(idx) and self.used["days"][j]:
                keep = ((self.days[:, j].take(r) >> wd[idx].astype(np.int64)) & 1).astype(bool)
                idx, r = idx[keep], r[keep]
            if len(idx):
                hits.append((idx, r, j))
        price, rate = price.copy(), rate.copy()
        win_prio = rate_prio[rate]

        def above(idx: np.ndarray, r: np.ndarray, j: int) -> np.ndarray:
            p, i = self.prio[:, j].take(r), self.rate_id[:, j].take(r)
            return (p > win_prio[idx]) | ((p == win_prio[idx]) & (i > rate[idx]))

        for idx, r, j in hits:  # OVERRIDE: the highest-ranked one wins
            sel = (self.kind[:, j].take(r) == 0) & above(idx, r, j)
            idx, r = idx[sel], r[sel]
            price[idx] = self.amount[:, j].take(r)
            rate[idx] = self.rate_id[:, j].take(r)
            win_prio[idx] = self.prio[:, j].take(r)
        delta = np.zeros(len(price), dtype=np.int64)
        for idx, r, j in hits:  # ABSOLUTE / RELATIVE ranked above the winner
            sel = (self.kind[:, j].take(r) > 0) & above(idx, r, j) & (price[idx] >= 0)
            idx, r = idx[sel], r[sel]
            amount, kind = self.amount[:, j].take(r), self.kind[:, j].take(r)
            delta[idx] += np.where(kind == 1, amount, relative_cents(price[idx], amount))
        return np.where(price >= 0, np.maximum(price + delta, 0), price), rate
