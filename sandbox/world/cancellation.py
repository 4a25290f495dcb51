"""Cancelling a booking: the cancellation policy, the compensation bill line (190) that replaces
the booked items, the refund of what was paid above it, and the reverse on a rebooking.

The policy (docs/sandbox.md, "Cancellations"): the park retains a share of each bill's value
(its item lines without tourist tax) that depends on the days between the cancellation date
and the arrival date, never more than the payer has paid; the rest of the payments is refunded.
After the cancellation each bill holds one CANCEL_COMPENSATION line of the retained amount, so
TOTAL = PAID = the compensation and DUE = TO_PAY = 0; a cancelled booking earns the agent no
commission. The bulk history applies the same rules with numpy (`bulk_cancel.py`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np

from .billing import VAT_RENT, Bill

# (fewest days before arrival, retained %), checked in order; fewer days than the last row
# (a cancellation on the arrival day) retains ON_ARRIVAL_PCT.
CANCELLATION_POLICY: tuple[tuple[int, int], ...] = ((90, 15), (30, 50), (7, 75), (1, 90))
ON_ARRIVAL_PCT = 100
COMPENSATION_LINE = 190
COMPENSATION_VAT = VAT_RENT  # the compensation replaces the stay: the rent's VAT rate
COMPENSATION_DESCRIPTION = "Cancellation compensation"


def retained_pct(days_before_arrival: int) -> int:
    """The policy's retained share (%) for a cancellation `days_before_arrival` days out."""
    for days, pct in CANCELLATION_POLICY:
        if days_before_arrival >= days:
            return pct
    return ON_ARRIVAL_PCT


def retained_pct_many(days_before_arrival: np.ndarray) -> np.ndarray:
    """`retained_pct` for many cancellations at once."""
    days = np.asarray(days_before_arrival, dtype=np.int64)
    out = np.full(days.shape, ON_ARRIVAL_PCT, dtype=np.int64)
    for lo, pct in reversed(CANCELLATION_POLICY):
        out[days >= lo] = pct
    return out


def compensation_cents(base: Any, pct: Any, paid: Any) -> Any:
    """Cents retained of a bill: `pct` % of its value `base` (half up), at most what was paid.

    Integer arithmetic only, the same for Python ints and numpy arrays."""
    share = (np.maximum(base, 0) * pct + 50) // 100
    kept = np.minimum(share, np.maximum(paid, 0))
    return int(kept) if np.ndim(kept) == 0 else kept


class CancellationMixin:
    """Compensation on cancellation, and the booked items back on a rebooking."""

    def _clear_bill(self, bill: Bill) -> None:
        """Remove a bill's item and summary lines (records too) and zero its figures."""
        tbl = self.t["billlines"]
        for rec in [*bill.items, *bill.summary.values()]:
            tbl.delete(rec["reservationBillLineId"])
        bill.items = []
        bill.summary = {}
        bill.total = bill.tax = bill.vat = bill.comm = bill.comm_vat = 0

    def _compensate(self, r: Any, t: datetime) -> None:
        """After the move to CANCELLED: each bill keeps the policy's compensation (at most what
        was paid) as one line 190, refunds the rest of its payments and loses its commission."""
        pct = retained_pct(r.arr - t.toordinal())
        rr_id = r.acc_rr["reservedResourceId"]
        value = 0
        lines: list[dict[str, Any]] = []
        refunds: list[int] = []
        for bill in r.bills.values():
            base = bill.total - bill.tax
            value += base
            keep = compensation_cents(base, pct, bill.paid)
            refunds.append(bill.paid - keep)
            self._clear_bill(bill)
            bill.pct = 0
            bill.paid = keep
            lines.append(
                self._line(
                    r,
                    bill,
                    COMPENSATION_LINE,
                    None,
                    None,
                    rr_id,
                    None,
                    COMPENSATION_DESCRIPTION,
                    1,
                    1,
                    keep,
                    keep,
                    COMPENSATION_VAT,
                    r.arr,
                    r.dep,
                )
            )
            self._close_bill(r, bill)
        r.cancelled_value = value
        self._post(r, lines, 1, t, "cancellation compensation")
        currency = r.ch.currency
        for back in refunds:
            if back > 0:
                self._hook("refund_given", r, t, amount=back / 100, currencyCode=currency)
        self._bill_changed(r, t)

    def _reinstate(self, r: Any, t: datetime) -> None:
        """Before a cancelled booking goes back on the books: reverse the compensation and bill
        the stay again (the payments kept stay paid)."""
        self._post(r, self._items(r), -1, t, "compensation reversal")
        for payer, bill in r.bills.items():
            self._clear_bill(bill)
            bill.pct = r.ch.commission if payer != "CUSTOMER" else 0
        ov = r.acc_rr["overrideValue"]
        self._stay_items(
            r,
            r.arr,
            r.dep - r.arr,
            initial=True,
            override=round(ov * 100) if ov is not None else None,
        )
        for bill in r.bills.values():
            self._close_bill(r, bill)
        r.cancelled_value = None

    def _bill_changed(self, r: Any, t: datetime) -> None:
        self._hook(
            "bill_change",
            r,
            t,
            amount=sum(b.total for b in r.bills.values()) / 100,
            currencyCode=r.ch.currency,
        )
