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
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from .billing import (
    BILL_LINE_FIELDS,
    SUMMARY_ORDER,
    TOURIST_TAX,
    VAT_COMMISSION,
    VAT_EXTRA,
    VAT_RENT,
    Bill,
)
from .clock import DAY_MS, EPOCH_ORD, dtstr, from_ms, to_ms
from .columns import ComposedColumn, TaggedNumberColumn, json_inner
from .customers import COUNTRIES, CUSTOMER_FIELDS, FIRST, LAST, LOYALTY
from .finance import JOURNAL_ENTRY_FIELDS
from .generate import CATS, CH_CODES
from .reference import ADDONS, CATEGORIES
from .reservations import (
    CANCEL_KEEP_PCT,
    RESERVATION_FIELDS,
    RESERVED_RESOURCE_FIELDS,
    SUBJECTS,
    Res,
)
from .states import CODES, HOLDING, NAMES, ON_BOOKS
from .store import (
    NULL,
    Block,
    Getter,
    col_cents,
    col_const,
    col_date,
    col_dt,
    col_int,
    col_key,
    col_vocab,
)

S = CODES
INF = np.iinfo(np.int64).max
ON_BOOKS_C = np.array(sorted(CODES[s] for s in ON_BOOKS), dtype=np.int16)
HOLDING_C = np.array(sorted(CODES[s] for s in HOLDING), dtype=np.int16)
CANCELLED_C = np.array([S["CANCELLED"], S["DEF_CANCELLED"]], dtype=np.int16)
PAYERS = ("CUSTOMER", "PAYING_CUSTOMER", "AGENT")
RES_TYPES = ("ACCOMMODATIONTYPE", "SPECIAL", "EXTRA")
LEDGERS = ("8000", "8050", "8100", "1750")  # rent, discount, extras, tourist tax
COMMENTS = ("booking", "reversal", "stay extension")
VATS = (VAT_RENT, VAT_EXTRA, 0.0)
EXTRA_CODES = ("LINEN", "CLEANING", "PETS")
STREETS = ("Main", "Church", "Mill", "Dyke")
# plan actions (slot order = the order the per-reservation plan lists them)
CONFIRM, DECLINE, EXPIRE, CANCEL, DEFCANCEL, PAY, PAYALL, ARRIVE, DEPART = range(9)
N_SLOTS = 9
RES_BASE = 100001
CUST_BASE = 5001
# dtypes of the bill line columns while they are built (a large world has ~13M lines)
LINE_DT: dict[str, Any] = {
    "row": np.int32,
    "ord": np.int16,
    "bill": np.int8,
    "type": np.int16,
    "res": np.int32,
    "rtype": np.int8,
    "rr": np.int32,
    "rate": np.int32,
    "rt": np.int32,
    "desc": np.int16,
    "qty": np.int16,
    "mult": np.int8,
    "value": np.int32,
    "total": np.int32,
    "vat": np.int8,
    "start": np.int32,
    "end": np.int32,
}


@dataclass
class Frozen:
    """Typed state of the bulk reservations, by position (rid - RES_BASE)."""

    tidx: np.ndarray
    unit: np.ndarray
    arr: np.ndarray
    dep: np.ndarray
    cat: np.ndarray
    ch: np.ndarray
    cust: np.ndarray
    t0: np.ndarray
    persons: np.ndarray
    pets: np.ndarray
    disc: np.ndarray
    payer: np.ndarray  # rent payer: index into PAYERS
    status: np.ndarray
    live: np.ndarray  # True when the reservation is a `Res` in `world.res` (open or thawed)
    hist_off: np.ndarray  # per position: slice of hist_s/hist_t (closed ones only)
    hist_s: np.ndarray
    hist_t: np.ndarray


def _isin(a: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return np.isin(a, codes)


def _rep_offsets(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row of each item, offset of the item within its row) for `counts` items per row."""
    rows = np.repeat(np.arange(len(counts)), counts)
    offs = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    return rows, offs


class BulkMixin:
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
        )
        self._fz = fz
        c_idx = np.arange(n)
        mod = t0.copy()
        cancel = np.full(n, -1, dtype=np.int64)
        vstat = np.zeros(n, dtype=np.int16)
        postings, events = self._bulk_closed(
            c_idx, fz, np.where(due, times, INF), pay_arg, st0, mod, cancel, vstat
        )
        self._bulk_reservation_block(fz, rid, mod, cancel, vstat)
        # customers' reservations, in rid order
        cust_res: dict[int, list[int]] = {}
        for c, r in zip(cust.tolist(), rid.tolist(), strict=True):
            lst = cust_res.get(c)
            if lst is None:
                cust_res[c] = [r]
            else:
                lst.append(r)
        self.cust_res = cust_res
        # unit holds (no two stays of the timeline overlap on a unit)
        held = c_idx[_isin(fz.status, HOLDING_C)]
        nights = (dep[held] - arr[held]).astype(np.int64)
        rows, offs = _rep_offsets(nights)
        self.occ[unit[held][rows], arr[held][rows] - self.ord0 + offs] = rid[held][rows]
        del rows, offs
        self.n_created += n
        self._bulk_postings = postings
        # events inside the window, in time order
        win = to_ms(self._event_window)
        res_ids = np.array([ti.resource_id for ti in self.types], dtype=np.int64)
        ev_t, ev_row, ev_kind = events
        keep = ev_t > win
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
    def _bulk_customers(self, rng: np.random.Generator, t0: np.ndarray) -> np.ndarray:
        """Customer of every stay: 22 % come back, 1.5 % of the new ones are duplicates."""
        n = len(t0)
        u = rng.random(n)
        rep = (np.arange(n) > 0) & (u < 0.22)
        new = ~rep
        made = np.cumsum(new)
        before = made - new
        cust_idx = np.where(new, made - 1, np.floor(rng.random(n) * np.maximum(before, 1)))
        cust_idx = cust_idx.astype(np.int64)
        creator = np.flatnonzero(new)  # the stay that creates each customer
        c = len(creator)
        cb = before[creator]
        like = (cb > 0) & (rng.random(c) < 0.015)
        src = np.where(like, np.floor(rng.random(c) * np.maximum(cb, 1)), np.arange(c)).astype(
            np.int64
        )
        root = src.copy()
        while True:
            nxt = src[root]
            if np.array_equal(nxt, root):
                break
            root = nxt
        weights = np.cumsum([w for _, _, w in COUNTRIES])
        cc = np.minimum(np.searchsorted(weights, rng.random(c), side="right"), len(COUNTRIES) - 1)
        cols = {
            "cc": cc.astype(np.int8),
            "birth": rng.integers(1945, 2005, c).astype(np.int16),
            "fn": rng.integers(0, len(FIRST), c).astype(np.int8),
            "ln": rng.integers(0, len(LAST), c).astype(np.int8),
            "mail": (CUST_BASE + np.arange(c)).astype(np.int32),
            "pa": rng.integers(30, 50, c).astype(np.int8),
            "pb": rng.integers(100000000, 1000000000, c).astype(np.int32),
            "street": rng.integers(0, len(STREETS), c).astype(np.int8),
            "house": rng.integers(1, 201, c).astype(np.int16),
            "zip": rng.integers(1000, 10000, c).astype(np.int16),
        }
        cols = {k: v[root] for k, v in cols.items()}
        loyalty = rng.integers(0, len(LOYALTY), c).astype(np.int8)
        created = t0[creator] - rng.integers(1, 91, c) * 60_000
        self._dups.extend(
            zip(
                (CUST_BASE + src[like]).tolist(),
                (CUST_BASE + np.flatnonzero(like)).tolist(),
                strict=True,
            )
        )
        langs = [lg for _, lg, _ in COUNTRIES]
        ccs = [cc_ for cc_, _, _ in COUNTRIES]
        fn_l = [f.lower() for f in FIRST]
        ln_l = [x.lower() for x in LAST]

        def email_values(idx: Any, k: int) -> list[str]:
            return [
                f"{fn_l[a]}.{ln_l[b]}{m}@example.org"
                for a, b, m in zip(
                    cols["fn"][idx].tolist(),
                    cols["ln"][idx].tolist(),
                    cols["mail"][idx].tolist(),
                    strict=True,
                )
            ]

        def phone_values(idx: Any, k: int) -> list[str]:
            return [
                f"+{a}{b}"
                for a, b in zip(cols["pa"][idx].tolist(), cols["pb"][idx].tolist(), strict=True)
            ]

        def address_values(idx: Any, k: int) -> list[dict[str, Any]]:
            return [
                {
                    "address1": f"{STREETS[s_]} Street {h}",
                    "zipCode": f"{z}",
                    "city": "Springfield",
                    "countryCode": ccs[c_],
                }
                for s_, h, z, c_ in zip(
                    cols["street"][idx].tolist(),
                    cols["house"][idx].tolist(),
                    cols["zip"][idx].tolist(),
                    cols["cc"][idx].tolist(),
                    strict=True,
                )
            ]

        # the same values as JSON text, a column at a time (see columns.ComposedColumn)
        email = ComposedColumn(
            email_values,
            [
                (cols["fn"], ['"' + json_inner(f + ".") for f in fn_l]),
                (cols["ln"], [json_inner(x) for x in ln_l]),
                cols["mail"],
                '@example.org"',
            ],
        )
        phone = ComposedColumn(phone_values, ['"+', cols["pa"], cols["pb"], '"'])
        address = ComposedColumn(
            address_values,
            [
                '{"address1":"',
                (cols["street"], [json_inner(f"{x} Street ") for x in STREETS]),
                cols["house"],
                '","zipCode":"',
                cols["zip"],
                '","city":"Springfield","countryCode":',
                (cols["cc"], [orjson.dumps(c_).decode() + "}" for c_ in ccs]),
            ],
        )

        modified = created.copy()
        block = Block(
            CUST_BASE,
            c,
            CUSTOMER_FIELDS,
            [
                col_key(CUST_BASE),
                col_vocab(cols["cc"], ccs),
                col_vocab(cols["cc"], langs),
                col_int(cols["birth"]),
                col_vocab(np.where(loyalty < 3, -1, loyalty).astype(np.int8), LOYALTY),
                col_dt(created),
                col_dt(modified),
                col_vocab(cols["fn"], FIRST),
                col_vocab(cols["ln"], LAST),
                email,
                phone,
                address,
            ],
        )
        self.t["customers"].set_block(block)
        self._cust_ids = list(range(CUST_BASE, CUST_BASE + c))
        win = to_ms(self._event_window)
        for k in np.flatnonzero(created > win).tolist():
            self._event_buffer.append(
                (from_ms(int(created[k])), "CUSTOMER_EVENT", CUST_BASE + k, "CREATE", None)
            )
        return CUST_BASE + cust_idx

    # plans ------------------------------------------------------------------------------------
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
    ) -> tuple[dict[str, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Bills, state histories, postings and events of the stays' steps in `times` (INF =
        not now); returns the postings and the events (time, row, kind) in order."""
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
            k = hn[rows]
            hs[rows, k] = dst
            ht[rows, k] = t
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
        ar = np.arange(m)
        for k in range(N_SLOTS):
            action = order[:, k]
            tk = times[ar, action]
            present = tk != INF
            for a in range(N_SLOTS):
                sel = np.flatnonzero(present & (action == a))
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
                    rows = sel[mm]
                    move(rows, S["CANCELLED"], t[mm])
                    keep_c = np.round(tot_c[rows] * CANCEL_KEEP_PCT / 100).astype(np.int64)
                    keep_o = np.round(tot_o[rows] * CANCEL_KEEP_PCT / 100).astype(np.int64)
                    paid_c[rows] = np.minimum(paid_c[rows], keep_c)
                    paid_o[rows] = np.minimum(paid_o[rows], keep_o)
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
        )
        # summary lines now that payments are known
        self._bulk_line_block(
            lines, c_idx, fz, tot_c, tax_c, vat_c, tot_o, comm, comm_vat, paid_c, paid_o
        )
        e_t = np.concatenate(ev_t)
        e_rows = np.concatenate(ev_rows)
        e_kind = np.concatenate(ev_kind)
        o = np.lexsort((np.concatenate(ev_seq), e_rows, e_t))
        return postings, (e_t[o], c_idx[e_rows[o]], e_kind[o])

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
        price_m = self.price_m
        rate_m = self.rate_m
        p = price_m[key, day]
        rate = rate_m[key, day]
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
        o = np.lexsort(
            (
                np.concatenate([p_["ord"] for p_ in parts]),
                np.concatenate([p_["row"] for p_ in parts]),
            )
        )
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

    def _bulk_post_rows(
        self,
        c_idx: np.ndarray,
        fz: Frozen,
        items: dict[str, Any],
        rows: np.ndarray,
        t: np.ndarray,
        sign: np.ndarray,
    ) -> dict[str, np.ndarray]:
        """Journal postings (one per ledger with a non-zero amount) of the closed stays."""
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
            k: [] for k in ("t", "row", "ledger", "incl", "excl", "seq")
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
            out["seq"].append(np.flatnonzero(ok) * 4 + k)
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
        res["comment"] = np.where(res["incl"] < 0, 1, 0)
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

    # thawing -----------------------------------------------------------------------------------
    def _frozen_pos(self, rid: int) -> int:
        """Position of a closed (not yet thawed) bulk reservation, or -1."""
        fz = getattr(self, "_fz", None)
        if fz is None or not isinstance(rid, int):
            return -1
        j = rid - RES_BASE
        if 0 <= j < len(fz.live) and not fz.live[j]:
            blk = self.t["reservations"].block
            if blk is not None and blk.pos(rid) >= 0:
                return j
        return -1

    def _res(self, rid: int) -> Res | None:
        """The reservation's `Res`, thawing a closed bulk one."""
        r = self.res.get(rid)
        if r is None and self._frozen_pos(rid) >= 0:
            r = self._thaw(rid)
        return r

    def _res_if(self, rid: int, statuses: tuple[str, ...]) -> Res | None:
        """`_res(rid)`, but a frozen one is thawed only when its status is in `statuses`."""
        r = self.res.get(rid)
        if r is not None:
            return r
        j = self._frozen_pos(rid)
        if j >= 0 and NAMES[int(self._fz.status[j])] in statuses:
            return self._thaw(rid)
        return None

    def _thaw(self, rid: int) -> Res:
        fz = self._fz
        j = rid - RES_BASE
        r = Res()
        r.rid = rid
        r.ti = self.types[int(fz.tidx[j])]
        r.unit = int(fz.unit[j])
        r.arr = int(fz.arr[j])
        r.dep = int(fz.dep[j])
        r.ch = self.channels[CH_CODES[int(fz.ch[j])]]
        r.rt = r.ch.rate_type_id
        r.category = CATS[int(fz.cat[j])]
        r.status = NAMES[int(fz.status[j])]
        r.created = from_ms(int(fz.t0[j]))
        r.persons = int(fz.persons[j])
        r.pets = int(fz.pets[j])
        r.discount_pct = int(fz.disc[j])
        r.rent_payer = PAYERS[int(fz.payer[j])]
        r.rec = self.t["reservations"].thaw(rid)
        r.cust = r.rec["customerId"]
        rrs = self.t["reservedresources"]
        for n_, key in enumerate(rrs.child_keys(rid)):
            rec = rrs.thaw(key)
            if n_ == 0:
                r.acc_rr = rec
            else:
                r.extra_rrs[rec["code"]] = rec
        lines = self.t["billlines"]
        r.bills["CUSTOMER"] = None  # type: ignore[assignment]  # keeps the customer bill first
        for key in lines.child_keys(rid):
            ln = lines.thaw(key)
            payer = ln["payerType"]
            bill = r.bills.get(payer)
            if bill is None:
                pct = r.ch.commission if payer != "CUSTOMER" else 0
                bill = r.bills[payer] = Bill(ln["reservationBillId"], payer, pct)
            code = ln["billLineType"]
            if code in (10, 20, 190, 250):
                c = round(ln["total"] * 100)
                bill.items.append(ln)
                bill.total += c
                if code == 250:
                    bill.tax += c
                bill.vat += round(c * ln["vatRate"] / (100 + ln["vatRate"]))
            else:
                bill.summary[code] = ln
                if code == 80:
                    bill.paid = round(ln["total"] * 100)
        for bill in r.bills.values():
            self._refresh_bill(bill)
        lo, hi = int(fz.hist_off[j]), int(fz.hist_off[j + 1])
        r.hist = [
            (from_ms(int(t)), NAMES[int(s_)])
            for t, s_ in zip(fz.hist_t[lo:hi].tolist(), fz.hist_s[lo:hi].tolist(), strict=True)
        ]
        r.holding = r.status in HOLDING
        fz.live[j] = True
        self.res[rid] = r
        return r

    def _frozen_history(self, rid: int) -> list[tuple[str, str]] | None:
        j = self._frozen_pos(rid)
        if j < 0:
            return None
        fz = self._fz
        lo, hi = int(fz.hist_off[j]), int(fz.hist_off[j + 1])
        return [
            (dtstr(from_ms(int(t))), NAMES[int(s_)])
            for t, s_ in zip(fz.hist_t[lo:hi].tolist(), fz.hist_s[lo:hi].tolist(), strict=True)
        ]

    def _frozen_rows(self) -> np.ndarray:
        """Positions of the closed bulk reservations still frozen and not deleted."""
        fz = getattr(self, "_fz", None)
        if fz is None:
            return np.zeros(0, dtype=np.int64)
        blk = self.t["reservations"].block
        assert blk is not None
        return np.flatnonzero(~fz.live & blk.alive[: len(fz.live)])

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


__all__ = ["RES_BASE", "VAT_EXTRA", "BulkMixin", "Frozen"]
