"""The bulk history stored as column blocks (`store.Block`): bill lines and reservations."""

from __future__ import annotations

from typing import Any

import numpy as np

from sandbox.world.block import (
    Block,
    col_cents,
    col_const,
    col_date,
    col_dt,
    col_int,
    col_key,
    col_vocab,
)
from sandbox.world.bulk_common import (
    LINE_DT,
    PAYERS,
    RES_BASE,
    RES_TYPES,
    VATS,
    Frozen,
)
from sandbox.world.columns import TaggedNumberColumn
from sandbox.world.pieces import NULL
from sandbox.world.reservation_state import RESERVATION_FIELDS
from sandbox.world.seasons import CATS, CH_CODES

from .billing import (
    BILL_LINE_FIELDS,
    SUMMARY_ORDER,
)
from .reference import CATEGORIES


class BulkBlocksMixin:
    """The bulk history stored as column blocks (`store.Block`): bill lines and reservations."""

    def _bulk_line_block(
        self,
        items: dict[str, Any],
        c_idx: np.ndarray,
        fz: Frozen,
        tot_c: np.ndarray,
        tax_c: np.ndarray,
        vat_c: np.ndarray,
        tot_o: np.ndarray,
        comm: np.ndarray,
        comm_vat: np.ndarray,
        paid_c: np.ndarray,
        paid_o: np.ndarray,
    ) -> None:
        m = len(c_idx)
        d_sum = items.pop("_d_sum")
        desc = items.pop("_desc")
        vat_o = items.pop("_vat_o")
        item_keys = [k for k in items if not k.startswith("_") and k != "vat_in"]
        parts = [{k: items[k] for k in item_keys}]
        payer = fz.payer[c_idx].astype(np.int64)
        has_o = payer != 0
        all_rows = np.arange(m)
        o_rows = np.flatnonzero(has_o)
        for bill, rows, total, tax, vat, cm, cv, paid in (
            (0, all_rows, tot_c, tax_c, vat_c, 0, 0, paid_c),
            (1, o_rows, tot_o, 0, vat_o, comm, comm_vat, paid_o),
        ):
            for code, _d in SUMMARY_ORDER:
                if code in (100, 110):
                    if bill == 0:
                        continue
                    rws = rows[payer[rows] == 2]
                else:
                    rws = rows
                figures = {
                    40: total - tax,
                    60: vat,
                    70: total,
                    80: paid,
                    90: total - paid,
                    100: cm,
                    110: cv,
                    120: total - cm - cv - paid,
                }[code]
                v = np.broadcast_to(np.asarray(figures, dtype=np.int64), (m,))[rws]
                k = len(rws)

                def const(value: Any, name: str, k: int = k) -> np.ndarray:
                    return np.broadcast_to(np.asarray(value, dtype=LINE_DT[name]), (k,))

                parts.append(
                    {
                        "row": rws.astype(LINE_DT["row"]),
                        "ord": const(2000 + 100 * bill + code, "ord"),
                        "bill": const(bill, "bill"),
                        "type": const(code, "type"),
                        "res": const(NULL, "res"),
                        "rtype": const(-1, "rtype"),
                        "rr": const(NULL, "rr"),
                        "rate": const(NULL, "rate"),
                        "rt": const(NULL, "rt"),
                        "desc": const(d_sum[code], "desc"),
                        "qty": const(1, "qty"),
                        "mult": const(1, "mult"),
                        "value": v,
                        "total": v,
                        "vat": const(3, "vat"),
                        "start": const(0, "start"),
                        "end": const(0, "end"),
                    }
                )
        # by row, then ord (int16): one stable sort of a combined key, as `np.lexsort` ordered
        # them (ties in their order here) at a fraction of its cost (the parts are sorted runs)
        key = np.concatenate([p_["row"] for p_ in parts]).astype(np.int64) << 16
        key |= np.concatenate([p_["ord"] for p_ in parts]).astype(np.int64) + 32768
        o = np.argsort(key, kind="stable")
        del key
        cols = {}
        for k in item_keys:  # one column at a time, freeing the parts as it goes
            items.pop(k, None)
            joined = np.concatenate([p_.pop(k) for p_ in parts])
            cols[k] = joined[o].astype(LINE_DT[k], copy=False)
            del joined
        del parts, o
        row = cols["row"]
        nl = len(row)
        rid = (RES_BASE + c_idx[row]).astype(np.int32)
        # bill ids: the customer bill of each reservation, then the other one
        nb = 1 + has_o.astype(np.int64)
        first_bill = self._bill_seq + 1 + np.concatenate([[0], np.cumsum(nb)[:-1]])
        self._bill_seq += int(nb.sum())
        bill_id = (first_bill[row] + cols["bill"]).astype(np.int32)
        line_payer = np.where(cols["bill"] == 0, 0, payer[row]).astype(np.int8)
        tbl = self.t["billlines"]
        assert tbl.next_id == 1
        rt_vat = np.where(cols["vat"] == 3, 2, cols["vat"]).astype(np.int8)
        # the columns the ground truth reads (the same arrays the block renders from)
        truth = {
            "rid": rid,
            "type": cols["type"].astype(np.int16),
            "rtype": cols["rtype"].astype(np.int8),
            "value": cols.pop("value"),
            "qty": cols.pop("qty"),
            "mult": cols.pop("mult"),
            "start": cols["start"].astype(np.int32),
            "end": cols["end"].astype(np.int32),
        }
        self._fz_lines = truth
        cols.pop("total")

        def line_total(idx: Any) -> np.ndarray:
            """Cents of every line's total: value x quantity x multiplier."""
            v, q, m_ = truth["value"][idx], truth["qty"][idx], truth["mult"][idx]
            return v.astype(np.int64) * q * m_

        tbl.set_block(
            Block(
                1,
                nl,
                BILL_LINE_FIELDS,
                [
                    col_key(1),
                    col_int(bill_id),
                    col_int(rid),
                    col_vocab(line_payer, PAYERS),
                    col_int(truth["type"]),
                    col_int(cols["res"].astype(np.int32), nullable=True),
                    col_vocab(truth["rtype"], RES_TYPES),
                    col_int(cols["rr"].astype(np.int32), nullable=True),
                    col_int(cols["rate"].astype(np.int32), nullable=True),
                    col_int(cols["rt"].astype(np.int32), nullable=True),
                    col_vocab(cols["desc"].astype(np.int16), desc),
                    col_int(truth["qty"]),
                    col_int(truth["mult"]),
                    col_cents(truth["value"]),
                    col_cents(line_total),
                    col_vocab(rt_vat, VATS),
                    col_date(truth["start"]),
                    col_date(truth["end"]),
                ],
                parent=rid,
            )
        )

    # the reservation block ---------------------------------------------------------------------
    def _bulk_reservation_block(
        self, fz: Frozen, rid: np.ndarray, mod: np.ndarray, cancel: np.ndarray, vstat: np.ndarray
    ) -> None:
        n = len(rid)
        types = self.types
        locs = [ti.location_id for ti in types]
        cats = [CATEGORIES[c] for c in CATS]
        chans = [self.channels[c] for c in CH_CODES]
        tidx = fz.tidx
        rid32 = rid.astype(np.int32)
        ch = fz.ch

        number = TaggedNumberColumn(tidx, [f"{loc:03d}" for loc in locs], rid32, 8)
        voucher = TaggedNumberColumn(
            ch, [f"{c.code}-" if c.commission else None for c in chans], rid32, 0
        )

        block = Block(
            RES_BASE,
            n,
            RESERVATION_FIELDS,
            [
                col_key(RES_BASE),
                number,
                col_vocab(fz.cat, [c[0] for c in cats]),
                col_vocab(fz.cat, list(CATS)),
                col_vocab(fz.cat, [c[1] for c in cats]),
                col_vocab(fz.cat, [c[2] for c in cats]),
                col_int(fz.status),
                col_date(fz.arr),
                col_date(fz.dep),
                col_const(None),
                col_const(None),
                col_int(fz.cust),
                col_vocab(ch, [c.channel_id for c in chans]),
                col_vocab(ch, [c.code for c in chans]),
                col_vocab(tidx, locs),
                col_dt(fz.t0),
                col_dt(mod),
                col_dt(cancel),
                voucher,
                col_int(vstat),
            ],
        )
        self.t["reservations"].set_block(block)
