"""The bulk history's cancellations: the policy's compensation (`cancellation.py`) for every
closed stay cancelled at once, its journal postings and the bill lines that replace the items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sandbox.world.bulk_common import LEDGERS, LINE_DT, VATS, Frozen
from sandbox.world.pieces import NULL

from .cancellation import (
    COMPENSATION_DESCRIPTION,
    COMPENSATION_LINE,
    COMPENSATION_VAT,
    compensation_cents,
    retained_pct_many,
)
from .clock import DAY_MS, EPOCH_ORD
from .finance import CANCELLATION_LEDGER

CANCEL_LEDGER_IX = LEDGERS.index(CANCELLATION_LEDGER)
COMPENSATION_COMMENT = 3  # COMMENTS[3]
COMPENSATION_VAT_IX = VATS.index(COMPENSATION_VAT)


def vat_in_many(total: np.ndarray, rate: float) -> np.ndarray:
    """`billing._vat_in` for many totals (the same float expression, rounded half even)."""
    return np.round(total * rate / (100 + rate)).astype(np.int64)


@dataclass
class BulkCancels:
    """Per closed stay (row of `c_idx`): cancelled?, when (ms) and the retained cents per bill."""

    done: np.ndarray
    t: np.ndarray
    comp_c: np.ndarray
    comp_o: np.ndarray
    value: np.ndarray

    @classmethod
    def empty(cls, m: int) -> BulkCancels:
        z = np.zeros(m, dtype=np.int64)
        return cls(np.zeros(m, dtype=bool), z.copy(), z.copy(), z.copy(), z.copy())


class BulkCancelMixin:
    """The cancellation step of the bulk state machine and what it leaves on the bills."""

    def _bulk_cancel(
        self,
        rows: np.ndarray,
        t: np.ndarray,
        arr: np.ndarray,
        bills: tuple[np.ndarray, np.ndarray, np.ndarray],
        paid_c: np.ndarray,
        paid_o: np.ndarray,
        out: BulkCancels,
    ) -> None:
        """Rows just moved to CANCELLED at times t: keep the compensation, refund the rest."""
        tot_c, tax_c, tot_o = bills
        pct = retained_pct_many(arr[rows] - (t // DAY_MS + EPOCH_ORD))
        base_c = tot_c[rows] - tax_c[rows]
        base_o = tot_o[rows]
        keep_c = compensation_cents(base_c, pct, paid_c[rows])
        keep_o = compensation_cents(base_o, pct, paid_o[rows])
        paid_c[rows] = keep_c
        paid_o[rows] = keep_o
        out.done[rows] = True
        out.t[rows] = t
        out.comp_c[rows] = keep_c
        out.comp_o[rows] = keep_o
        out.value[rows] = base_c + base_o

    def _bulk_cancel_postings(self, out: BulkCancels) -> dict[str, np.ndarray]:
        """One credit on the cancellation ledger per cancelled stay with a compensation."""
        incl = out.comp_c + out.comp_o
        rows = np.flatnonzero(out.done & (incl != 0))
        vat = vat_in_many(out.comp_c[rows], COMPENSATION_VAT) + vat_in_many(
            out.comp_o[rows], COMPENSATION_VAT
        )
        return {
            "row": rows,
            "t": out.t[rows],
            "ledger": np.full(len(rows), CANCEL_LEDGER_IX, dtype=np.int64),
            "incl": incl[rows],
            "excl": incl[rows] - vat,
            "comment": np.full(len(rows), COMPENSATION_COMMENT, dtype=np.int64),
        }

    def _bulk_compensate(
        self,
        items: dict[str, Any],
        c_idx: np.ndarray,
        fz: Frozen,
        out: BulkCancels,
        bills: list[np.ndarray],
    ) -> None:
        """Replace the item lines of the cancelled stays by one compensation line per bill, and
        their bill figures (total, tax, VAT, commission) by the compensation's; in place."""
        tot_c, tax_c, vat_c, tot_o, vat_o, comm, comm_vat = bills
        done = out.done
        fz.cancel_value[c_idx[done]] = out.value[done]
        if not done.any():
            return
        keep = ~done[items["row"]]
        for k in [k for k in items if not k.startswith("_")]:
            items[k] = items[k][keep]
        del keep
        desc: list[str] = items["_desc"]
        d_comp = len(desc)
        desc.append(COMPENSATION_DESCRIPTION)
        acc_rr = items["_acc_rr"]
        has_o = fz.payer[c_idx] != 0
        parts = []
        for bill, rows, comp in (
            (0, np.flatnonzero(done), out.comp_c),
            (1, np.flatnonzero(done & has_o), out.comp_o),
        ):
            j = c_idx[rows]
            k = len(rows)
            cols: dict[str, Any] = {
                "row": rows,
                "ord": 2000 + 100 * bill,  # before the bill's summary lines (2000 + 100 b + code)
                "bill": bill,
                "type": COMPENSATION_LINE,
                "res": NULL,
                "rtype": -1,
                "rr": acc_rr[rows],
                "rate": NULL,
                "rt": NULL,
                "desc": d_comp,
                "qty": 1,
                "mult": 1,
                "value": comp[rows],
                "total": comp[rows],
                "vat": COMPENSATION_VAT_IX,
                "start": fz.arr[j],
                "end": fz.dep[j],
                "vat_in": vat_in_many(comp[rows], COMPENSATION_VAT),
            }
            parts.append(
                {
                    name: np.broadcast_to(np.asarray(v), (k,)).astype(LINE_DT.get(name, np.int64))
                    for name, v in cols.items()
                }
            )
        for name in parts[0]:
            items[name] = np.concatenate([items[name], *(p[name] for p in parts)])
        rows = np.flatnonzero(done)
        tot_c[rows] = out.comp_c[rows]
        tax_c[rows] = 0
        vat_c[rows] = vat_in_many(out.comp_c[rows], COMPENSATION_VAT)
        tot_o[rows] = out.comp_o[rows]
        vat_o[rows] = vat_in_many(out.comp_o[rows], COMPENSATION_VAT)
        comm[rows] = 0  # a cancelled booking earns the agent no commission
        comm_vat[rows] = 0
