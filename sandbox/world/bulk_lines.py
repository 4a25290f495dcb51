"""The bulk history's bill lines: every bill of every closed stay, as columns."""

from __future__ import annotations

from typing import Any

import numpy as np

from sandbox.world.block import Block, col_const, col_date, col_int, col_key, col_vocab
from sandbox.world.bulk_common import (
    EXTRA_CODES,
    LINE_DT,
    RES_BASE,
    VATS,
    Frozen,
    _rep_offsets,
)
from sandbox.world.pieces import NULL
from sandbox.world.reservation_state import RESERVED_RESOURCE_FIELDS, SUBJECTS
from sandbox.world.seasons import CH_CODES

from .billing import (
    SUMMARY_ORDER,
    TOURIST_TAX,
)
from .clock import DAY_MS, EPOCH_ORD
from .reference import ADDONS


class BulkLinesMixin:
    """The bulk history's bill lines: every bill of every closed stay, as columns."""

    # bills -------------------------------------------------------------------------------------
    def _bulk_lines(self, c_idx: np.ndarray, fz: Frozen) -> dict[str, Any]:
        """Item lines of the closed stays (reserved resources and subjects too)."""
        m = len(c_idx)
        T = len(self.types)
        tidx = fz.tidx[c_idx].astype(np.int64)
        cat = fz.cat[c_idx].astype(np.int64)
        arr = fz.arr[c_idx].astype(np.int64)
        dep = fz.dep[c_idx].astype(np.int64)
        nights = dep - arr
        persons_b = fz.persons[c_idx].astype(np.int64)  # 0 for blocks
        s = self._stays
        pets = fz.pets[c_idx].astype(np.int64)
        rid = RES_BASE + c_idx
        rt_ids = sorted(self.rate_types)
        rt_of_ch = np.array([rt_ids.index(self.channels[c].rate_type_id) for c in CH_CODES])
        rt_i = rt_of_ch[fz.ch[c_idx].astype(np.int64)]
        rt_id = np.array(rt_ids, dtype=np.int64)[rt_i]
        linen = (cat <= 1) & s["linen"][c_idx]
        clean = (cat <= 1) & s["cleaning"][c_idx]
        petx = (pets > 0) & (cat != 3)
        # reserved resources: accommodation, then LINEN, CLEANING, PETS
        n_rr = 1 + linen + clean + petx
        rr_first = 1 + np.concatenate([[0], np.cumsum(n_rr)[:-1]])
        rr_tbl = self.t["reservedresources"]
        assert rr_tbl.next_id == 1
        rr_kind = [tidx]
        rr_row = [np.arange(m)]
        rr_ord = [np.zeros(m, dtype=np.int64)]
        rr_qty = [np.ones(m, dtype=np.int64)]
        extra_rr: dict[int, np.ndarray] = {}
        persons_q = fz.persons[c_idx].astype(np.int64)
        for a, (mask, qty) in enumerate(
            ((linen, persons_q), (clean, np.ones(m, np.int64)), (petx, pets))
        ):
            rows = np.flatnonzero(mask)
            rr_kind.append(T + a + np.zeros(len(rows), dtype=np.int64))
            rr_row.append(rows)
            rr_ord.append(np.full(len(rows), a + 1))
            rr_qty.append(qty[rows])
        rr_row_a = np.concatenate(rr_row)
        o = np.lexsort((np.concatenate(rr_ord), rr_row_a))
        rr_row_a = rr_row_a[o]
        rr_kind_a = np.concatenate(rr_kind)[o]
        rr_qty_a = np.concatenate(rr_qty)[o]
        rr_keys = 1 + np.arange(len(o))
        for a in range(3):
            ids = np.full(m, NULL, dtype=np.int64)
            sel = rr_kind_a == T + a
            ids[rr_row_a[sel]] = rr_keys[sel]
            extra_rr[a] = ids
        acc_rr = rr_first
        unit_ids = np.asarray(self.unit_ids, dtype=np.int64)
        rr_is_acc = rr_kind_a < T
        kinds = self.types
        rr_res = [ti.resource_id for ti in kinds] + [ADDONS[c][0] for c in EXTRA_CODES]
        rr_code = [ti.code for ti in kinds] + list(EXTRA_CODES)
        rr_name = [f"{ti.kind.replace('_', ' ').title()} {ti.persons}p" for ti in kinds] + [
            ADDONS[c][1] for c in EXTRA_CODES
        ]
        rr_type = ["ACCOMMODATIONTYPE"] * T + ["EXTRA"] * 3
        rr_unit = np.where(rr_is_acc, unit_ids[fz.unit[c_idx].astype(np.int64)][rr_row_a], NULL)
        rr_rt = np.where(rr_is_acc, rt_id[rr_row_a], NULL)
        k32 = rr_kind_a.astype(np.int32)
        rr_block = Block(
            1,
            len(o),
            RESERVED_RESOURCE_FIELDS,
            [
                col_key(1),
                col_int(rid[rr_row_a].astype(np.int32)),
                col_vocab(k32, rr_res),
                col_int(rr_unit.astype(np.int32), nullable=True),
                col_int(rr_rt.astype(np.int32), nullable=True),
                col_vocab(k32, rr_type),
                col_vocab(k32, rr_code),
                col_vocab(k32, rr_name),
                col_int(rr_qty_a.astype(np.int32)),
                col_date(arr[rr_row_a].astype(np.int32)),
                col_date(dep[rr_row_a].astype(np.int32)),
                col_const("BOOKED"),
                col_const(None),
            ],
            parent=rid[rr_row_a].astype(np.int32),
        )
        rr_tbl.set_block(rr_block)
        # subjects: adults, children, babies, pets
        sj_tbl = self.t["subjects"]
        assert sj_tbl.next_id == 1
        blk = cat == 3
        q = [
            np.where(blk, 1, s["adults"][c_idx]),
            np.where(blk, 0, s["children"][c_idx]),
            np.where(blk, 0, s["babies"][c_idx]),
            np.where(blk, 0, pets),
        ]
        sj_row = []
        sj_sid = []
        sj_q = []
        for k in range(4):
            rows = np.flatnonzero(q[k] > 0)
            sj_row.append(rows)
            sj_sid.append(np.full(len(rows), k))
            sj_q.append(q[k][rows])
        sr = np.concatenate(sj_row)
        o = np.lexsort((np.concatenate(sj_sid), sr))
        sr = sr[o]
        ssid = np.concatenate(sj_sid)[o].astype(np.int8)
        sq = np.concatenate(sj_q)[o]
        sjs = [*SUBJECTS, (4, "PET", None, None)]
        sj_tbl.set_block(
            Block(
                1,
                len(o),
                (
                    "reservationSubjectId",
                    "reservationId",
                    "subjectId",
                    "type",
                    "ageFrom",
                    "ageTo",
                    "quantity",
                ),
                [
                    col_key(1),
                    col_int(rid[sr].astype(np.int32)),
                    col_int((ssid + 1).astype(np.int8)),
                    col_vocab(ssid, [x[1] for x in sjs]),
                    col_vocab(ssid, [x[2] for x in sjs]),
                    col_vocab(ssid, [x[3] for x in sjs]),
                    col_int(sq.astype(np.int16)),
                ],
                parent=rid[sr].astype(np.int32),
            )
        )
        # item lines. rent runs first (guests and groups only)
        rent = np.flatnonzero(cat <= 1)
        rows, offs = _rep_offsets(nights[rent])
        rrow = rent[rows]
        day = arr[rrow] + offs - self.ord0
        key = tidx[rrow] * len(rt_ids) + rt_i[rrow]
        assert list(rt_ids) == self._rt_order
        booked = EPOCH_ORD + fz.t0[c_idx].astype(np.int64) // DAY_MS
        p, rate = self.stay_prices(key, day, arr[rrow], nights[rrow], booked[rrow])
        start = np.ones(len(p), dtype=bool)
        start[1:] = (rrow[1:] != rrow[:-1]) | (p[1:] != p[:-1])
        run_of = np.cumsum(start) - 1
        run_n = np.bincount(run_of)
        run_row = rrow[start]
        run_first = (arr[run_row] + offs[start]).astype(np.int64)
        run_price = p[start]
        run_rate = rate[start]
        run_idx = offs[start]  # order within the reservation (runs are in night order)
        rent_tot = np.bincount(run_row, weights=run_price * run_n, minlength=m).astype(np.int64)
        # description vocab: Rent per type, add-ons, tourist tax, summary lines
        desc = [f"Rent {ti.code}" for ti in self.types]
        d_addon = {c: len(desc) + i for i, c in enumerate((*EXTRA_CODES, "EARLYBIRD"))}
        desc += [ADDONS[c][1] for c in (*EXTRA_CODES, "EARLYBIRD")]
        d_tax = len(desc)
        desc.append("Tourist tax")
        d_sum = {code: len(desc) + i for i, (code, _d) in enumerate(SUMMARY_ORDER)}
        desc += [d for _c, d in SUMMARY_ORDER]
        rent_bill = (fz.payer[c_idx] != 0).astype(np.int64)  # 1 = the other bill
        parts: list[dict[str, np.ndarray]] = []

        def part(rows: np.ndarray, order: Any, **cols: Any) -> None:
            k = len(rows)
            d = {
                "row": rows.astype(LINE_DT["row"]),
                "ord": np.broadcast_to(np.asarray(order), (k,)).astype(LINE_DT["ord"]),
            }
            for name, v in cols.items():
                d[name] = np.broadcast_to(np.asarray(v), (k,)).astype(LINE_DT[name])
            parts.append(d)

        part(
            run_row,
            run_idx,
            bill=rent_bill[run_row],
            type=10,
            res=np.asarray([t.resource_id for t in self.types])[tidx[run_row]],
            rtype=0,
            rr=acc_rr[run_row],
            rate=run_rate,
            rt=rt_id[run_row],
            desc=tidx[run_row],
            qty=run_n,
            mult=1,
            value=run_price,
            total=run_price * run_n,
            vat=0,
            start=run_first,
            end=run_first + run_n,
        )
        dr = np.flatnonzero((cat <= 1) & (fz.disc[c_idx] > 0))
        dval = -np.round(rent_tot[dr] * fz.disc[c_idx][dr].astype(np.int64) / 100).astype(np.int64)
        part(
            dr,
            1000,
            bill=rent_bill[dr],
            type=10,
            res=ADDONS["EARLYBIRD"][0],
            rtype=1,
            rr=acc_rr[dr],
            rate=NULL,
            rt=rt_id[dr],
            desc=d_addon["EARLYBIRD"],
            qty=1,
            mult=1,
            value=dval,
            total=dval,
            vat=0,
            start=arr[dr],
            end=dep[dr],
        )
        ln_r = np.flatnonzero(linen)
        lq = persons_q[ln_r]
        pr = ADDONS["LINEN"][2]
        part(
            ln_r,
            1001,
            bill=0,
            type=10,
            res=ADDONS["LINEN"][0],
            rtype=2,
            rr=extra_rr[0][ln_r],
            rate=NULL,
            rt=NULL,
            desc=d_addon["LINEN"],
            qty=lq,
            mult=1,
            value=pr,
            total=pr * lq,
            vat=1,
            start=arr[ln_r],
            end=dep[ln_r],
        )
        cl = np.flatnonzero(clean)
        pr = ADDONS["CLEANING"][2]
        part(
            cl,
            1002,
            bill=0,
            type=10,
            res=ADDONS["CLEANING"][0],
            rtype=2,
            rr=extra_rr[1][cl],
            rate=NULL,
            rt=NULL,
            desc=d_addon["CLEANING"],
            qty=1,
            mult=1,
            value=pr,
            total=pr,
            vat=1,
            start=0,
            end=0,
        )
        pt = np.flatnonzero(petx)
        pr = ADDONS["PETS"][2]
        part(
            pt,
            1003,
            bill=0,
            type=10,
            res=ADDONS["PETS"][0],
            rtype=2,
            rr=extra_rr[2][pt],
            rate=NULL,
            rt=NULL,
            desc=d_addon["PETS"],
            qty=nights[pt],
            mult=pets[pt],
            value=pr,
            total=pr * nights[pt] * pets[pt],
            vat=1,
            start=arr[pt],
            end=dep[pt],
        )
        tx = np.flatnonzero((persons_b > 0) & (cat != 3))
        tq = persons_b[tx] * nights[tx]
        part(
            tx,
            1004,
            bill=0,
            type=250,
            res=NULL,
            rtype=-1,
            rr=NULL,
            rate=NULL,
            rt=NULL,
            desc=d_tax,
            qty=tq,
            mult=1,
            value=TOURIST_TAX,
            total=TOURIST_TAX * tq,
            vat=2,
            start=arr[tx],
            end=dep[tx],
        )
        items = {}
        for k in list(parts[0]):
            items[k] = np.concatenate([p_.pop(k) for p_ in parts])
        parts.clear()
        vat_rate = np.asarray(VATS)[items["vat"]]
        tot = items["total"].astype(np.int64)
        vat_in = np.round(tot * vat_rate / (100 + vat_rate)).astype(np.int64)
        on_c = items["bill"] == 0
        tot_c = np.bincount(items["row"][on_c], weights=tot[on_c], minlength=m).astype(np.int64)
        tax_m = on_c & (items["type"] == 250)
        tax_c = np.bincount(items["row"][tax_m], weights=tot[tax_m], minlength=m).astype(np.int64)
        vat_c = np.bincount(items["row"][on_c], weights=vat_in[on_c], minlength=m).astype(np.int64)
        on_o = ~on_c
        tot_o = np.bincount(items["row"][on_o], weights=tot[on_o], minlength=m).astype(np.int64)
        vat_o = np.bincount(items["row"][on_o], weights=vat_in[on_o], minlength=m).astype(np.int64)
        items["vat_in"] = vat_in
        items["_bills"] = (tot_c, tax_c, vat_c, tot_o)
        items["_vat_o"] = vat_o
        items["_d_sum"] = d_sum
        items["_desc"] = desc
        items["_acc_rr"] = acc_rr
        return items
