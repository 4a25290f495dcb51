"""The bulk history's state machine: every closed stay stepped through its plan at once."""

from __future__ import annotations

import numpy as np

from sandbox.world.bulk_cancel import BulkCancelMixin, BulkCancels
from sandbox.world.bulk_common import (
    ARRIVE,
    CANCEL,
    CANCELLED_C,
    CONFIRM,
    DECLINE,
    DEFCANCEL,
    DEPART,
    EXPIRE,
    HOLDING_C,
    INF,
    N_SLOTS,
    ON_BOOKS_C,
    PAY,
    PAYALL,
    Frozen,
    S,
    _isin,
)
from sandbox.world.seasons import CH_CODES

from .allocator import release
from .billing import (
    VAT_COMMISSION,
)


class BulkStatesMixin(BulkCancelMixin):
    """The bulk history's state machine: every closed stay stepped through its plan at once."""

    # the state machine over the closed stays --------------------------------------------------
    def _bulk_closed(
        self,
        c_idx: np.ndarray,
        fz: Frozen,
        times: np.ndarray,
        pay_arg: np.ndarray,
        st0: np.ndarray,
        mod_all: np.ndarray,
        cancel_all: np.ndarray,
        vstat_all: np.ndarray,
        since: int,
    ) -> tuple[dict[str, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Bills, state histories, postings and events of the stays' steps in `times` (INF =
        not now); returns the postings and the events (time, row, kind) later than `since`
        (ms), in order."""
        m = len(c_idx)
        lines = self._bulk_lines(c_idx, fz)
        tot_c, tax_c, vat_c, tot_o = lines.pop("_bills")
        comm_pct = np.array([self.channels[c].commission for c in CH_CODES], dtype=np.int64)
        pct = np.where(fz.payer[c_idx] == 2, comm_pct[fz.ch[c_idx].astype(np.int64)], 0)
        comm = np.round(tot_o * pct / 100).astype(np.int64)
        comm_vat = np.round(comm * VAT_COMMISSION / 100).astype(np.int64)
        has_o = fz.payer[c_idx] != 0
        paid_c = np.zeros(m, dtype=np.int64)
        paid_o = np.zeros(m, dtype=np.int64)
        cancels = BulkCancels.empty(m)
        arr = fz.arr[c_idx].astype(np.int64)
        st = st0.astype(np.int16).copy()
        t0 = fz.t0[c_idx]
        mod = t0.copy()
        cancel = np.full(m, -1, dtype=np.int64)
        vstat = np.zeros(m, dtype=np.int16)
        hs = np.zeros((m, 2 * N_SLOTS + 1), dtype=np.int16)
        ht = np.zeros((m, 2 * N_SLOTS + 1), dtype=np.int64)
        hn = np.ones(m, dtype=np.int64)
        hs[:, 0] = st
        ht[:, 0] = t0
        hw = hs.shape[1]
        hs_flat, ht_flat = hs.reshape(-1), ht.reshape(-1)  # views
        post_rows: list[np.ndarray] = []
        post_t: list[np.ndarray] = []
        post_sign: list[np.ndarray] = []
        ev_rows: list[np.ndarray] = []
        ev_t: list[np.ndarray] = []
        ev_kind: list[np.ndarray] = []
        ev_seq: list[np.ndarray] = []

        def emit(rows: np.ndarray, t: np.ndarray, kind: int) -> None:
            ev_rows.append(rows)
            ev_t.append(t)
            ev_kind.append(np.full(len(rows), kind, dtype=np.int8))
            ev_seq.append(np.full(len(rows), len(ev_seq), dtype=np.int32))

        hold = _isin(st, HOLDING_C)
        emit(np.arange(m), t0, 0)
        emit(np.flatnonzero(hold), t0[hold], 2)
        ob = np.zeros(m, dtype=bool)
        first = _isin(st, ON_BOOKS_C)
        post_rows.append(np.flatnonzero(first))
        post_t.append(t0[first])
        post_sign.append(np.ones(int(first.sum()), dtype=np.int64))
        ob[first] = True
        on_set = ON_BOOKS_C
        valid21 = np.concatenate([ON_BOOKS_C, [S["CHECKED_OUT"]]])

        def move(rows: np.ndarray, dst: int, t: np.ndarray) -> None:
            if not len(rows):
                return
            to_hold = dst in HOLDING_C
            flip = hold[rows] != to_hold
            emit(rows[flip], t[flip], 2)  # the unit is held or released
            hold[rows] = to_hold
            at_ = rows * hw + hn[rows]  # flat positions: cheaper than hs[rows, k]
            hs_flat[at_] = dst
            ht_flat[at_] = t
            hn[rows] += 1
            st[rows] = dst
            mod[rows] = t
            if dst in CANCELLED_C:
                cancel[rows] = np.where(cancel[rows] < 0, t, cancel[rows])
            now_on = dst in on_set
            was = ob[rows]
            if now_on and (~was).any():
                sel = ~was
                post_rows.append(rows[sel])
                post_t.append(t[sel])
                post_sign.append(np.ones(int(sel.sum()), dtype=np.int64))
            elif not now_on and was.any():
                post_rows.append(rows[was])
                post_t.append(t[was])
                post_sign.append(-np.ones(int(was.sum()), dtype=np.int64))
            ob[rows] = now_on
            if dst in valid21:
                vstat[rows] = 21
            emit(rows, t, 1)

        def pay(
            rows: np.ndarray, other: np.ndarray, amount: np.ndarray | None, t: np.ndarray
        ) -> np.ndarray:
            """Pay bills of `rows` (`other` selects the rent payer's bill); amount None = all due."""
            total = np.where(other, tot_o[rows], tot_c[rows])
            paid = np.where(other, paid_o[rows], paid_c[rows])
            due = total - np.where(other, comm[rows] + comm_vat[rows], 0) - paid
            amt = due if amount is None else np.minimum(amount, due)
            ok = amt > 0
            amt = np.where(ok, amt, 0)
            o = other & ok
            c = ~other & ok
            paid_o[rows[o]] += amt[o]
            paid_c[rows[c]] += amt[c]
            mod[rows[ok]] = np.maximum(mod[rows[ok]], t[ok])
            emit(rows[ok], t[ok], 1)
            return ok

        def pay_all(rows: np.ndarray, t: np.ndarray) -> np.ndarray:
            ok = pay(rows, np.zeros(len(rows), dtype=bool), None, t)
            ho = has_o[rows]
            if ho.any():
                ok2 = pay(rows[ho], np.ones(int(ho.sum()), dtype=bool), None, t[ho])
                ok[ho] |= ok2
            return ok

        order = np.argsort(times, axis=1, kind="stable")
        ar = np.arange(m) * N_SLOTS
        times_flat = np.ascontiguousarray(times).reshape(-1)
        for k in range(N_SLOTS):
            action = order[:, k]
            tk = times_flat.take(ar + action)  # times[rows, action], gathered flat
            # the rows of each action, in row order: one stable sort (absent steps last)
            group = np.where(tk != INF, action, N_SLOTS).astype(np.int8)
            by_action = np.argsort(group, kind="stable")
            cuts = np.cumsum(np.bincount(group, minlength=N_SLOTS + 1)).tolist()
            for a in range(N_SLOTS):
                sel = by_action[(cuts[a - 1] if a else 0) : cuts[a]]
                if not len(sel):
                    continue
                t = tk[sel]
                cur = st[sel]
                if a == CONFIRM:
                    mm = _isin(cur, np.array([S["REQUEST"], S["OPTIONAL"], S["QUOTATION"]]))
                    move(sel[mm], S["PROVISIONAL"], t[mm])
                elif a == PAY:
                    mm = _isin(cur, np.array([S["PROVISIONAL"], S["DEFINITIVE"], S["CHECKED_IN"]]))
                    rows, tt = sel[mm], t[mm]
                    other = pay_arg[rows, 0] == 1
                    frac_pm = pay_arg[rows, 1]
                    total = np.where(other, tot_o[rows], tot_c[rows])
                    amount = np.where(frac_pm >= 1000, INF // 4, np.round(total * (frac_pm / 1000)))
                    ok = pay(rows, other, amount.astype(np.int64), tt)
                    pv = ok & (st[rows] == S["PROVISIONAL"])
                    move(rows[pv], S["DEFINITIVE"], tt[pv])
                elif a == CANCEL:
                    mm = _isin(cur, np.array([S["PROVISIONAL"], S["DEFINITIVE"]]))
                    rows, tt = sel[mm], t[mm]
                    move(rows, S["CANCELLED"], tt)
                    self._bulk_cancel(rows, tt, arr, (tot_c, tax_c, tot_o), paid_c, paid_o, cancels)
                elif a == DEFCANCEL:
                    mm = cur == S["CANCELLED"]
                    move(sel[mm], S["DEF_CANCELLED"], t[mm])
                elif a == DECLINE:
                    mm = _isin(
                        cur,
                        np.array([S["REQUEST"], S["OPTIONAL"], S["QUOTATION"], S["PROVISIONAL"]]),
                    )
                    move(sel[mm], S["DECLINED"], t[mm])
                elif a in (EXPIRE, ARRIVE):
                    mm = _isin(cur, np.array([S["OPTIONAL"], S["QUOTATION"]]))
                    move(sel[mm], S["EXPIRED"], t[mm])
                    mm = cur == S["REQUEST"]
                    move(sel[mm], S["DECLINED"], t[mm])
                    if a == ARRIVE:
                        mm = cur == S["PROVISIONAL"]
                        rows, tt = sel[mm], t[mm]
                        pay_all(rows, tt)
                        move(rows, S["DEFINITIVE"], tt)
                        mm = st[sel] == S["DEFINITIVE"]
                        rows, tt = sel[mm], t[mm]
                        pay_all(rows, tt)
                        move(rows, S["CHECKED_IN"], tt)
                elif a == DEPART:
                    mm = cur == S["CHECKED_IN"]
                    move(sel[mm], S["CHECKED_OUT"], t[mm])
                elif a == PAYALL:
                    mm = _isin(cur, np.array([S["PROVISIONAL"], S["DEFINITIVE"]]))
                    rows, tt = sel[mm], t[mm]
                    pay_all(rows, tt)
                    pv = st[rows] == S["PROVISIONAL"]
                    move(rows[pv], S["DEFINITIVE"], tt[pv])
        fz.status[c_idx] = st
        mod_all[c_idx] = mod
        cancel_all[c_idx] = cancel
        vstat_all[c_idx] = vstat
        # histories, flat
        counts = np.zeros(len(fz.t0), dtype=np.int64)
        counts[c_idx] = hn
        fz.hist_off = np.concatenate([[0], np.cumsum(counts)])
        mask = np.arange(hs.shape[1])[None, :] < hn[:, None]
        fz.hist_s = hs[mask]
        fz.hist_t = ht[mask]
        del mask, order  # scratch of the state machine: free before the bill lines
        postings = self._bulk_post_rows(
            c_idx,
            fz,
            lines,
            np.concatenate(post_rows),
            np.concatenate(post_t),
            np.concatenate(post_sign),
            self._bulk_cancel_postings(cancels),
        )
        # the cancelled stays' items give way to their compensation (one line 190 per bill)
        vat_o = lines["_vat_o"]
        self._bulk_compensate(
            lines, c_idx, fz, cancels, [tot_c, tax_c, vat_c, tot_o, vat_o, comm, comm_vat]
        )
        # summary lines now that payments are known (their columns peak the generation's memory)
        release()
        self._bulk_line_block(
            lines, c_idx, fz, tot_c, tax_c, vat_c, tot_o, comm, comm_vat, paid_c, paid_o
        )
        # the events after `since`, in order: filtered before the sort (the rest are dropped;
        # a stable sort of the kept ones gives them in the order the whole one gave them)
        e_t = np.concatenate(ev_t)
        keep = np.flatnonzero(e_t > since)
        e_t = e_t[keep]
        e_rows = np.concatenate(ev_rows)[keep]
        e_kind = np.concatenate(ev_kind)[keep]
        o = np.lexsort((np.concatenate(ev_seq)[keep], e_rows, e_t))
        return postings, (e_t[o], c_idx[e_rows[o]], e_kind[o])
