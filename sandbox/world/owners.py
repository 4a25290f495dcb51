"""Owners of privately owned units: their records and contracts, their monthly owner journals,
and how they change while the clock moves (OWNER_EVENT).

The owned units are the ones the timeline already gives owner stays (every 7th unit that is a
chalet or lodge, `timeline.py`), so the generated owner stays (category OWNER, type INVOICE) are
their owners' own use. Every draw here comes from a random stream of its own (seeded from the
world's seed), so the rest of the world is byte-identical to a world without owners.

Journals: at each month's close (the first moment of the next month, at generation for every
closed month) the world books each owner's share of the month (`owner_rule.statement`) in an
OWNER_MUTATION_REPORT journal report per company, currency and month: one entry per unit, the
share credited to ledger 1610 (owner payable) against 8010, `resourceCode` the unit's code.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from .clock import dstr, dtstr, ms
from .customers import COUNTRIES, FIRST, LAST
from .owner_rule import contracts_by_unit, statement, unit_nights

OWNER_SEED = 0x0E1  # the owners' own random stream: (seed, OWNER_SEED)
OWNER_START_ID = 7001
SHARES = (60.0, 62.5, 65.0, 70.0, 75.0)  # revenue-share percentages offered
OWNER_LEDGER = "1610"  # owner payable
OWNER_COST_LEDGER = "8010"
OWNER_REPORT_TYPE = "OWNER_MUTATION_REPORT"
OWNER_REPORT_FIRST_NUMBER = 9001  # owner reports are numbered on their own
OWNER_CHANGES_PER_DAY = 0.6  # per world: contact, contract, prospect, dropped prospect
OWNER_CHANGE_KINDS = ("contact", "contract", "prospect", "drop")


def _month_after(d: date) -> date:
    return date(d.year + d.month // 12, d.month % 12 + 1, 1)


class OwnersMixin:
    """Owners, their contracts and owner journals (see the module docstring)."""

    def _owner_person(self, py: random.Random, t: datetime) -> dict[str, Any]:
        cc, lang, _w = py.choice(COUNTRIES)
        fn, ln = py.choice(FIRST), py.choice(LAST)
        return {
            "firstName": fn,
            "lastName": ln,
            "email": f"{fn.lower()}.{ln.lower()}{py.randint(1, 999)}@owners.example",
            "phone": f"+31 6 {py.randint(10000000, 99999999)}",
            "address": {
                "address1": f"Eigenaarslaan {py.randint(1, 300)}",
                "zipCode": f"{py.randint(1000, 9999)}",
                "city": "Utrecht",
                "countryCode": cc,
            },
            "countryCode": cc,
            "language": lang,
            "createdDate": dtstr(t),
            "modifiedDate": dtstr(t),
        }

    def _new_owner(self, t: datetime) -> dict[str, Any]:
        tbl = self.t["owners"]
        oid = tbl.new_id()
        rec = {"ownerId": oid, "code": f"OWN{oid}", **self._owner_person(self._owner_py, t)}
        rec["contracts"] = []
        return tbl.add(rec)

    def _build_owners(self) -> None:
        """Owners of the owned units, with contracts; then the journals of the closed months."""
        self._owner_py = random.Random(f"owners:{self.seed}")
        self._owner_rng = np.random.default_rng([self.seed, OWNER_SEED])
        self._owner_contract_seq = 0
        self._owner_report_seq = OWNER_REPORT_FIRST_NUMBER - 1
        self._owner_reports: dict[tuple[int, str, date], dict[str, Any]] = {}
        self.t["owners"].next_id = max(self.t["owners"].next_id, OWNER_START_ID)
        py = self._owner_py
        owned = [
            u
            for u in range(len(self.unit_ids))
            if u % 7 == 0 and self.types[int(self.unit_type[u])].kind in ("CHALET", "LODGE")
        ]
        since = datetime.fromordinal(self.ord0 - 400)
        owner: dict[str, Any] | None = None
        last_loc = None
        for u in owned:
            ti = self.types[int(self.unit_type[u])]
            if owner is None or last_loc != ti.location_id or py.random() >= 0.3:
                owner = self._new_owner(since + timedelta(days=py.randint(0, 300)))
            last_loc = ti.location_id
            start = max(int(self.unit_setup[u]), self.ord0 - py.randint(0, 200))
            pct = py.choice(SHARES)
            if py.random() < 0.3:  # renegotiated once during the history, from a month's first
                d = date.fromordinal(self.ord0 + py.randint(60, 600)).replace(day=1)
                if d.toordinal() > start:
                    self._add_contract(owner, u, start, d.toordinal(), pct)
                    start, pct = d.toordinal(), py.choice(SHARES)
            self._add_contract(owner, u, start, None, pct)
        for _ in range(max(1, len(owned) // 6)):  # prospects: owners without a unit yet
            self._new_owner(self.now - timedelta(days=py.randint(20, 400)))
        self._owner_closed = date(self.now.year, self.now.month, 1)
        self._post_owner_months(date.fromordinal(self.ord0).replace(day=1), self._owner_closed)

    def _add_contract(
        self, owner: dict[str, Any], u: int, start: int, end: int | None, pct: float
    ) -> None:
        self._owner_contract_seq += 1
        ti = self.types[int(self.unit_type[u])]
        owner["contracts"].append(
            {
                "contractId": self._owner_contract_seq,
                "ownerId": owner["ownerId"],
                "unitId": self.unit_ids[u],
                "resourceId": ti.resource_id,
                "contractType": "RENTAL_POOL",
                "shareBasis": "ROOM_REVENUE_EXCL_VAT",
                "revenueSharePercentage": pct,
                "startDate": dstr(start),
                "endDate": dstr(end) if end is not None else None,
            }
        )

    # journals --------------------------------------------------------------------------------
    def _post_owner_months(self, first: date, stop: date) -> None:
        """Book the owner share of every month from `first` up to (not including) `stop`."""
        if first >= stop:
            return
        contracts = contracts_by_unit(self.t["owners"].records())
        # the reservations on the books that hold an owned unit in those months (`occ` holds
        # every on-the-books stay's unit nights), instead of reading every reservation
        rows = [self.unit_index(u) for u in contracts]
        lo = max(first.toordinal() - self.ord0, 0)
        hi = max(min(stop.toordinal() - self.ord0, self.occ.shape[1]), lo)
        held = np.unique(self.occ[rows, lo:hi]) if rows else np.zeros(0, dtype=np.int64)
        nights = [
            n
            for n in unit_nights(self, set(contracts), [int(r) for r in held if r])
            if first.toordinal() <= n["ord"] < stop.toordinal()
        ]
        unit_loc = {
            self.unit_ids[u]: self.types[int(self.unit_type[u])] for u in range(len(self.unit_ids))
        }
        codes = {r["unitId"]: r["code"] for r in self.t["units"].records()}
        tbl = self.t["journalentries"]
        from .finance import _ENTRY

        for (_owner, unit, month, cur), row in sorted(statement(nights, contracts).items()):
            share = row["owner_share"]
            if share == 0 or cur is None:
                continue
            ti = unit_loc[unit]
            rep = self._owner_report(ti.company_id, cur, month)
            posted = (_month_after(month) - timedelta(days=1)).isoformat()  # within the period
            amount = abs(share) / 100
            credit = share > 0
            tbl.add(
                _ENTRY(
                    tbl.new_id(),
                    rep["journalReportId"],
                    OWNER_REPORT_TYPE,
                    rep["reportNumber"],
                    posted,
                    None,
                    None,
                    ti.location_id,
                    codes[unit],
                    OWNER_LEDGER,
                    OWNER_COST_LEDGER,
                    ti.location_code,
                    0.0 if credit else amount,
                    amount if credit else 0.0,
                    0.0 if credit else amount,
                    amount if credit else 0.0,
                    None,
                    None,
                    None,
                    f"Owner share {month.isoformat()[:7]}",
                )
            )

    def _owner_report(self, company: int, currency: str, month: date) -> dict[str, Any]:
        key = (company, currency, month)
        rep = self._owner_reports.get(key)
        if rep is None:
            tbl = self.t["journalreports"]
            self._owner_report_seq += 1
            nxt = _month_after(month)
            rep = tbl.add(
                {
                    "journalReportId": tbl.new_id(),
                    "companyId": company,
                    "reportNumber": self._owner_report_seq,
                    "type": OWNER_REPORT_TYPE,
                    "periodFrom": month.isoformat(),
                    "periodTo": (nxt - timedelta(days=1)).isoformat(),
                    "createdDate": dtstr(datetime(nxt.year, nxt.month, 1, 0, 10)),
                    "currencyCode": currency,
                }
            )
            self._owner_reports[key] = rep
        return rep

    def _close_owner_months(self, now: datetime) -> None:
        """Book the months that closed up to `now` (called at the end of `advance`)."""
        current = date(now.year, now.month, 1)
        if current > self._owner_closed:
            self._post_owner_months(self._owner_closed, current)
            self._owner_closed = current

    # changes over time -----------------------------------------------------------------------
    def _draw_owner_changes(self, start: datetime, end: datetime) -> list[tuple[datetime, str]]:
        span = (end - start).total_seconds()
        if span <= 0:
            return []
        rng = self._owner_rng
        n = int(rng.poisson(OWNER_CHANGES_PER_DAY * span / 86400))
        out = [
            (
                ms(start + timedelta(seconds=float(rng.uniform(0, span)))),
                OWNER_CHANGE_KINDS[int(rng.integers(0, len(OWNER_CHANGE_KINDS)))],
            )
            for _ in range(n)
        ]
        return sorted(out)

    def _owner_change(self, kind: str, t: datetime) -> None:
        py = self._owner_py
        tbl = self.t["owners"]
        owners = list(tbl.records())
        with_units = [o for o in owners if o["contracts"]]
        prospects = [o for o in owners if not o["contracts"]]
        if kind == "prospect" or (kind == "drop" and not prospects):
            rec = self._new_owner(t)
            self._event("OWNER_EVENT", rec["ownerId"], "CREATE", t)
        elif kind == "drop":
            victim = prospects[py.randrange(len(prospects))]
            tbl.delete(victim["ownerId"])
            self._event("OWNER_EVENT", victim["ownerId"], "DELETE", t)
        elif with_units:
            o = with_units[py.randrange(len(with_units))]
            if kind == "contact":
                person = self._owner_person(py, t)
                o["language"] = person["language"]
                o["phone"] = person["phone"]
            else:  # a new share from the first of next month
                first = _month_after(t.date()).toordinal()
                c = o["contracts"][py.randrange(len(o["contracts"]))]
                if c["endDate"] is None and date.fromisoformat(c["startDate"]).toordinal() < first:
                    c["endDate"] = dstr(first)
                    u = self.unit_index(c["unitId"])
                    self._add_contract(o, u, first, None, py.choice(SHARES))
            o["modifiedDate"] = dtstr(t)
            self._event("OWNER_EVENT", o["ownerId"], "UPDATE", t)
