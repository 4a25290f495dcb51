"""The history in bulk: every stay booked before the clock whose whole plan lies before the event
window is simulated with numpy (plans, state machine, payments, bills, postings) and stored as
columns (`store.Block`); the rest (stays still moving) go through the per-reservation path.

Why this is exact enough: during generation every timeline stay is booked on its own unit (the
timeline never overlaps stays on a unit and nothing else books before the end), so stays do not
interact; the state machine below is `ReservationsMixin._step` applied to the same plan shapes
as `GenerateMixin._plan`, one step position at a time over all stays. A closed reservation that is
touched later (merge, scripted update, churn) is thawed into a `Res` first (`_thaw`).
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from sandbox.world.bulk_blocks import BulkBlocksMixin
from sandbox.world.bulk_common import (
    ARRIVE,
    CANCEL,
    CONFIRM,
    DECLINE,
    DEFCANCEL,
    DEPART,
    EXPIRE,
    HOLDING_C,
    INF,
    N_SLOTS,
    PAY,
    PAYALL,
    PAYERS,
    RES_BASE,
    Frozen,
    S,
    _isin,
    _rep_offsets,
)
from sandbox.world.bulk_customers import BulkCustomersMixin
from sandbox.world.bulk_lines import BulkLinesMixin
from sandbox.world.bulk_postings import BulkPostingsMixin
from sandbox.world.bulk_states import BulkStatesMixin
from sandbox.world.frozen import FrozenMixin
from sandbox.world.seasons import CH_CODES

from .clock import DAY_MS, EPOCH_ORD, from_ms, to_ms


class BulkMixin(
    BulkCustomersMixin,
    BulkStatesMixin,
    BulkPostingsMixin,
    BulkLinesMixin,
    BulkBlocksMixin,
    FrozenMixin,
):
    """`_generate_bulk(n)` books stays 0..n-1 of the timeline (all booked before the clock)."""

    # --------------------------------------------------------------------------------------
    def _generate_bulk(self, n: int) -> None:
        s = {k: v[:n] for k, v in self._stays.items()}
        rng = np.random.default_rng([self.seed, 3])
        tbl = self.t["reservations"]
        assert tbl.next_id == RES_BASE and len(tbl) == 0
        rid = RES_BASE + np.arange(n, dtype=np.int64)
        unit = s["unit"].astype(np.int64)
        tidx = self.unit_type[unit].astype(np.int64)
        cat = s["cat"].astype(np.int64)
        ch = s["ch"].astype(np.int64)
        chans = [self.channels[c] for c in CH_CODES]
        c_comm = np.array([c.commission for c in chans], dtype=np.int64)
        comm = c_comm[ch] > 0
        guest = cat <= 1
        arr = s["arr"].astype(np.int64)
        dep = arr + s["dur"].astype(np.int64)
        base_ms = (self.ord0 - EPOCH_ORD) * DAY_MS
        t0 = base_ms + np.floor(s["restime"] * 3_600_000).astype(np.int64)
        # status at creation (as _create_from_stay)
        stv = s["st"]
        st0 = np.where(
            stv < 0.68,
            S["PROVISIONAL"],
            np.where(stv < 0.80, S["OPTIONAL"], np.where(stv < 0.87, S["REQUEST"], S["QUOTATION"])),
        )
        st0 = np.where((cat == 2) | comm, S["PROVISIONAL"], st0)
        st0 = np.where(cat == 3, S["DEFINITIVE"], st0).astype(np.int16)
        persons = s["adults"] + s["children"] + s["babies"]
        pets = np.where(cat == 3, 0, s["pets"]).astype(np.int64)
        persons = np.where(cat == 3, 1, persons).astype(np.int64)
        payer = np.where(comm, 2, np.where(s["paying"], 1, 0)).astype(np.int64)
        disc = s["discount"].astype(np.int64)

        cust = self._bulk_customers(rng, t0)
        times, pay_arg = self._bulk_plan(rng, rid, t0, arr, dep, st0, cat, guest, payer)
        # steps up to the clock are simulated here; later ones go to the heap
        now_ms = to_ms(self.now)
        due = times <= now_ms  # INF never is

        cancel = np.full(n, -1, dtype=np.int64)
        fz = Frozen(
            tidx=tidx.astype(np.int32),
            unit=unit.astype(np.int32),
            arr=arr.astype(np.int32),
            dep=dep.astype(np.int32),
            cat=cat.astype(np.int8),
            ch=ch.astype(np.int8),
            cust=cust.astype(np.int32),
            t0=t0,
            persons=np.where(cat == 3, 0, persons).astype(np.int16),
            pets=pets.astype(np.int16),
            disc=disc.astype(np.int8),
            payer=payer.astype(np.int8),
            status=st0.copy(),
            live=np.zeros(n, dtype=bool),
            hist_off=np.zeros(n + 1, dtype=np.int64),
            hist_s=np.zeros(0, dtype=np.int16),
            hist_t=np.zeros(0, dtype=np.int64),
            cancel_ms=cancel,
            cancel_value=np.zeros(n, dtype=np.int64),
        )
        self._fz = fz
        c_idx = np.arange(n)
        mod = t0.copy()
        vstat = np.zeros(n, dtype=np.int16)
        win = to_ms(self._event_window)  # the feed keeps the events after it
        postings, events = self._bulk_closed(
            c_idx, fz, np.where(due, times, INF), pay_arg, st0, mod, cancel, vstat, win
        )
        self._bulk_reservation_block(fz, rid, mod, cancel, vstat)
        # customers' reservations, in rid order
        self.cust_res = _grouped(cust, rid)
        # unit holds (no two stays of the timeline overlap on a unit)
        held = c_idx[_isin(fz.status, HOLDING_C)]
        nights = (dep[held] - arr[held]).astype(np.int64)
        rows, offs = _rep_offsets(nights)
        self.occ[unit[held][rows], arr[held][rows] - self.ord0 + offs] = rid[held][rows]
        del rows, offs
        self.n_created += n
        self._bulk_postings = postings
        # events inside the window, in time order
        res_ids = np.array([ti.resource_id for ti in self.types], dtype=np.int64)
        ev_t, ev_row, ev_kind = events
        keep = ev_t > win  # all of them, already
        kinds = (
            ("RESERVATION_EVENT", "CREATE"),
            ("RESERVATION_EVENT", "UPDATE"),
            ("AVAILABILITY_EVENT", "UPDATE"),
        )
        for t, r, k in zip(
            ev_t[keep].tolist(), ev_row[keep].tolist(), ev_kind[keep].tolist(), strict=True
        ):
            et, action = kinds[k]
            ent = RES_BASE + r if k < 2 else int(res_ids[tidx[r]])
            self._event_buffer.append((from_ms(t), et, ent, action, None))
        # the plans' later steps
        names = (
            "confirm",
            "decline",
            "expire",
            "cancel",
            "defcancel",
            "pay",
            "payall",
            "arrive",
            "depart",
        )
        later_r, later_a = np.nonzero((times != INF) & ~due)
        heap = self.heap
        for r, a in zip(later_r.tolist(), later_a.tolist(), strict=True):
            arg: Any = None
            if a == PAY:
                bill = "CUSTOMER" if pay_arg[r, 0] == 0 else PAYERS[int(payer[r])]
                arg = (bill, int(pay_arg[r, 1]) / 1000)
            elif a == ARRIVE:
                arg = int(arr[r])
            elif a == DEPART:
                arg = int(dep[r])
            self._seq += 1
            heap.append((from_ms(int(times[r, a])), self._seq, RES_BASE + r, names[a], arg))
        heapq.heapify(heap)

    # customers ------------------------------------------------------------------------------
    def _bulk_plan(
        self,
        rng: np.random.Generator,
        rid: np.ndarray,
        t0: np.ndarray,
        arr: np.ndarray,
        dep: np.ndarray,
        st0: np.ndarray,
        cat: np.ndarray,
        guest: np.ndarray,
        payer: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Step times (n, N_SLOTS; INF = no such step) and the pay step's (bill, fraction)."""
        n = len(t0)
        times = np.full((n, N_SLOTS), INF, dtype=np.int64)
        arr_t = (arr - EPOCH_ORD) * DAY_MS + 15 * 3_600_000 + (rid % 300) * 60_000
        dep_t = (dep - EPOCH_ORD) * DAY_MS + 9 * 3_600_000 + (rid % 90) * 60_000
        window = (arr_t - t0) / 1000.0

        def jitter() -> np.ndarray:
            return rng.integers(0, 1000, n)

        def within(lo: float, hi: float) -> np.ndarray:
            sec = np.minimum(rng.uniform(lo, hi, n), window * 0.9)
            return t0 + (np.maximum(60.0, sec) * 1000).astype(np.int64) + jitter()

        hq = _isin(st0, np.array([S["REQUEST"], S["OPTIONAL"], S["QUOTATION"]]))
        u1 = rng.random(n)
        conf = hq & (u1 < 0.68)
        tc = within(600, 5 * 86400)
        times[conf, CONFIRM] = tc[conf]
        decl = hq & ~conf & ((st0 == S["REQUEST"]) | (u1 > 0.9))
        td = within(3600, 4 * 86400)
        times[decl, DECLINE] = td[decl]
        te = t0 + 7 * DAY_MS
        exp = hq & ~conf & ~decl & (te < arr_t)
        times[exp, EXPIRE] = te[exp]
        # after confirmation (or from creation when PROVISIONAL)
        ac = conf | (st0 == S["PROVISIONAL"])
        tb = np.where(conf, tc, t0)
        w2 = np.maximum(120.0, (arr_t - tb) / 1000.0)
        lead = w2 / 86400

        def frac(lo: float, hi: float) -> np.ndarray:
            return (
                tb
                + (np.maximum(60.0, w2 * rng.uniform(lo, hi, n)) * 1000).astype(np.int64)
                + jitter()
            )

        canc = ac & guest & (rng.random(n) < 0.06 + 0.08 * np.minimum(1.0, lead / 180))
        tx = frac(0.05, 0.95)
        times[canc, CANCEL] = tx[canc]
        defc = canc & (rng.random(n) < 0.35)
        tdc = tx + (rng.uniform(1, 40, n) * DAY_MS).astype(np.int64)
        times[defc, DEFCANCEL] = tdc[defc]
        decl2 = ac & guest & ~canc & (rng.random(n) < 0.01)
        td2 = frac(0.01, 0.2)
        times[decl2, DECLINE] = td2[decl2]
        owner = ac & (cat == 2)
        agent = ac & ~owner & (payer == 2)
        gp = ac & ~owner & ~agent & guest & (rng.random(n) < 0.85)
        tp = np.where(owner, frac(0.01, 0.3), np.where(agent, frac(0.02, 0.4), frac(0.0, 0.15)))
        paying = owner | agent | gp
        times[paying, PAY] = tp[paying]
        # pay argument: bill (0 = customer, 1 = the other one), fraction in per mille
        pay_arg = np.zeros((n, 2), dtype=np.int64)
        pay_arg[:, 0] = np.where(owner, 0, np.where(agent, 1, (payer != 0).astype(np.int64)))
        pay_arg[:, 1] = np.where(gp, 300, 1000)
        pa = gp & (lead > 35)
        tpa = arr_t - (rng.uniform(28, 34, n) * DAY_MS).astype(np.int64)
        times[pa, PAYALL] = tpa[pa]
        times[:, ARRIVE] = arr_t
        times[:, DEPART] = dep_t
        return times, pay_arg


__all__ = ["BulkMixin"]


def _grouped(keys: np.ndarray, values: np.ndarray) -> dict[int, list[int]]:
    """key -> its values in their order (one sort instead of a dict lookup per value)."""
    if not len(keys):
        return {}
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    vs = values[order].tolist()
    cut = (np.flatnonzero(ks[1:] != ks[:-1]) + 1).tolist()
    starts, ends = [0, *cut], [*cut, len(vs)]
    return {k: vs[a:b] for k, a, b in zip(ks[starts].tolist(), starts, ends, strict=True)}
