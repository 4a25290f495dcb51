"""The bulk history's journal postings: rows per bill line, flushed into the journal entries."""

from __future__ import annotations

from typing import Any

import numpy as np

from sandbox.world.block import Block, col_cents, col_const, col_date, col_int, col_key, col_vocab
from sandbox.world.bulk_common import (
    COMMENTS,
    LEDGERS,
    RES_BASE,
    Frozen,
)
from sandbox.world.columns import TaggedNumberColumn
from sandbox.world.pieces import Getter
from sandbox.world.seasons import CH_CODES

from .clock import DAY_MS, EPOCH_ORD, from_ms, to_ms
from .finance import JOURNAL_ENTRY_FIELDS


class BulkPostingsMixin:
    """The bulk history's journal postings: rows per bill line, flushed into the journal entries."""

    def _bulk_post_rows(
        self,
        c_idx: np.ndarray,
        fz: Frozen,
        items: dict[str, Any],
        rows: np.ndarray,
        t: np.ndarray,
        sign: np.ndarray,
        extra: dict[str, np.ndarray] | None = None,
    ) -> dict[str, np.ndarray]:
        """Journal postings (one per ledger with a non-zero amount) of the closed stays: the
        items of `rows` at times `t` with `sign`, then `extra` entries (row, t, ledger, incl,
        excl, comment), which follow the item postings made at the same time."""
        m = len(c_idx)
        it_row = items["row"]
        ledger = np.where(items["type"] == 250, 3, items["rtype"])
        tot = items["total"].astype(np.int64)
        excl = tot - items["vat_in"]
        incl_l = np.zeros((m, 4), dtype=np.int64)
        excl_l = np.zeros((m, 4), dtype=np.int64)
        np.add.at(incl_l, (it_row, ledger), tot)
        np.add.at(excl_l, (it_row, ledger), excl)
        acc_rr = items["_acc_rr"]
        # ledger order as the items are listed: customer bill first, then the rent payer's
        order_c = np.array([0, 1, 2, 3])
        order_o = np.array([2, 3, 0, 1])
        other = fz.payer[c_idx][rows] != 0
        out: dict[str, list[np.ndarray]] = {
            k: [] for k in ("t", "row", "ledger", "incl", "excl", "comment", "seq")
        }
        for k in range(4):
            lg = np.where(other, order_o[k], order_c[k])
            inc = incl_l[rows, lg] * sign
            exc = excl_l[rows, lg] * sign
            ok = inc != 0
            out["t"].append(t[ok])
            out["row"].append(rows[ok])
            out["ledger"].append(lg[ok])
            out["incl"].append(inc[ok])
            out["excl"].append(exc[ok])
            out["comment"].append(np.where(sign[ok] < 0, 1, 0))  # as `_post` labels them
            out["seq"].append(np.flatnonzero(ok) * 4 + k)
        if extra is not None:
            for k, v in extra.items():
                out[k].append(v)
            out["seq"].append((len(rows) + np.arange(len(extra["row"]))) * 4)
        res = {k: np.concatenate(v) for k, v in out.items()}
        o = np.lexsort((res["seq"], res["t"]))
        res = {k: v[o] for k, v in res.items()}
        j = c_idx[res.pop("row")]
        res.pop("seq")
        res["tidx"] = fz.tidx[j].astype(np.int64)
        res["rid"] = RES_BASE + j
        res["cust"] = fz.cust[j].astype(np.int64)
        res["ch"] = fz.ch[j].astype(np.int64)
        res["rr"] = acc_rr[np.searchsorted(c_idx, j)]
        small = {
            "ledger": np.int8,
            "ch": np.int8,
            "comment": np.int8,
            "incl": np.int32,
            "excl": np.int32,
            "tidx": np.int32,
            "rid": np.int32,
            "cust": np.int32,
            "rr": np.int32,
        }
        return {k: v.astype(small.get(k, v.dtype)) for k, v in res.items()}

    # journal -------------------------------------------------------------------------------
    def _bulk_flush_postings(self) -> None:
        """All postings of the generation (bulk and per-reservation) as one block, by time."""
        b = getattr(self, "_bulk_postings", None)
        self._bulk_postings = None
        buf = self._post_buffer
        self._post_buffer = []
        ledger_ix = {lg: k for k, lg in enumerate(LEDGERS)}
        ch_ix = {self.channels[c].channel_id: k for k, c in enumerate(CH_CODES)}
        code_ix = {ti.code: ti.idx for ti in self.types}
        py_cols: dict[str, list[int]] = {
            k: []
            for k in ("t", "tidx", "rid", "ledger", "incl", "excl", "cust", "ch", "rr", "comment")
        }
        for t, _key, e in buf:
            # e = (mdate, rid, number, loc, code, ledger, second, cc, dI, cI, dE, cE, cust, ch, rr, c)
            incl = round(e[9] * 100) - round(e[8] * 100)
            excl = round(e[11] * 100) - round(e[10] * 100)
            py_cols["t"].append(to_ms(t))
            py_cols["tidx"].append(code_ix[e[4]])
            py_cols["rid"].append(e[1])
            py_cols["ledger"].append(ledger_ix.get(e[5], 2))
            py_cols["incl"].append(incl)
            py_cols["excl"].append(excl)
            py_cols["cust"].append(e[12])
            py_cols["ch"].append(ch_ix[e[13]])
            py_cols["rr"].append(e[14])
            py_cols["comment"].append(COMMENTS.index(e[15]) if e[15] in COMMENTS else 0)
        cols: dict[str, np.ndarray] = {}
        for k, v in py_cols.items():
            a = np.asarray(v, dtype=np.int64)
            cols[k] = a if b is None else np.concatenate([b[k].astype(np.int64), a])
        o = np.argsort(cols["t"], kind="stable")
        cols = {k: v[o] for k, v in cols.items()}
        n = len(o)
        types = self.types
        t_comp = np.array([ti.company_id for ti in types], dtype=np.int64)
        t_cur = np.array([ti.currency == "GBP" for ti in types], dtype=np.int64)
        ch_cur = np.array([self.channels[c].currency == "GBP" for c in CH_CODES], dtype=np.int64)
        comp = t_comp[cols["tidx"]]
        cur = ch_cur[cols["ch"]]
        del t_cur
        day = cols["t"] // DAY_MS
        month = day.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)
        rkey = (comp * 2 + cur) * 100000 + month
        uniq, first = np.unique(rkey, return_index=True)
        rep_id = np.zeros(len(uniq), dtype=np.int64)
        rep_no = np.zeros(len(uniq), dtype=np.int64)
        curs = ("EUR", "GBP")
        for k in np.argsort(first, kind="stable").tolist():
            f = int(first[k])
            d = from_ms(int(cols["t"][f])).date()
            rep = self._report((int(comp[f]), curs[int(cur[f])]), d)
            rep_id[k] = rep["journalReportId"]
            rep_no[k] = rep["reportNumber"]
        pos = np.searchsorted(uniq, rkey)
        report = rep_id[pos].astype(np.int32)
        number = rep_no[pos].astype(np.int32)
        mdate = (day + EPOCH_ORD).astype(np.int32)
        incl = cols["incl"]
        excl = cols["excl"]
        tidx = cols["tidx"].astype(np.int32)
        rid = cols["rid"].astype(np.int32)
        locs = [ti.location_id for ti in types]
        codes = [ti.code for ti in types]
        ccs = [ti.location_code for ti in types]

        number_col = TaggedNumberColumn(tidx, [f"{loc:03d}" for loc in locs], rid, 8)

        incl32 = incl.astype(np.int32)
        excl32 = excl.astype(np.int32)
        del incl, excl

        def side(sign: np.ndarray, amount: np.ndarray, *, debit: bool) -> Getter:
            """Debit (-amount) when `sign` < 0, credit (amount) when > 0, else 0.0."""

            def cents(idx: Any) -> np.ndarray:
                sg = sign[idx]
                am = amount[idx].astype(np.int64)
                own = (sg <= 0) if debit else (sg > 0)
                # -0.0 never appears: a zero amount on the own side stays 0.0 like the Python
                # expression `(-am if debit else am) / 100` gave for am == 0 (-0 / 100 == 0.0)
                return np.where(own, (-am if debit else am), 0)

            return col_cents(cents)

        tbl = self.t["journalentries"]
        if n == 0:
            return
        block = Block(
            tbl.next_id,
            n,
            JOURNAL_ENTRY_FIELDS,
            [
                col_key(tbl.next_id),
                col_int(report),
                col_const("MUTATION_REPORT"),
                col_int(number),
                col_date(mdate),
                col_int(rid),
                number_col,
                col_vocab(tidx, locs),
                col_vocab(tidx, codes),
                col_vocab(cols["ledger"].astype(np.int8), LEDGERS),
                col_const("1300"),
                col_vocab(tidx, ccs),
                side(incl32, incl32, debit=True),
                side(incl32, incl32, debit=False),
                side(incl32, excl32, debit=True),
                side(incl32, excl32, debit=False),
                col_int(cols["cust"].astype(np.int32)),
                col_vocab(
                    cols["ch"].astype(np.int8), [self.channels[c].channel_id for c in CH_CODES]
                ),
                col_int(cols["rr"].astype(np.int32)),
                col_vocab(cols["comment"].astype(np.int8), COMMENTS),
            ],
            parent=report,
            parent_sorted=False,
        )
        tbl.set_block(block)
