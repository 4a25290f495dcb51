"""Finance: monthly mutation reports with entries derived from bills, cash accounts, clearances."""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta
from typing import Any

from sandbox.world.block import record_factory

from .billing import _vat_in
from .clock import at, dstr, dtstr

REVENUE_LEDGERS = {"ACCOMMODATIONTYPE": "8000", "SPECIAL": "8050", "EXTRA": "8100"}
CANCELLATION_LEDGER = "8300"  # cancellation compensation (line 190): revenue
TAX_LEDGER = "1750"
DEBTORS_LEDGER = "1300"


JOURNAL_ENTRY_FIELDS = (
    "journalEntryId",
    "reportId",
    "type",
    "reportNumber",
    "mutationDate",
    "reservationId",
    "reservationNumber",
    "locationId",
    "resourceCode",
    "ledgerNumber",
    "secondLedgerNumber",
    "costCenter",
    "debitVatIncluded",
    "creditVatIncluded",
    "debitVatExcluded",
    "creditVatExcluded",
    "customerId",
    "distributionChannelId",
    "reservedResourceId",
    "comments",
)
_ENTRY = record_factory("JournalEntry", JOURNAL_ENTRY_FIELDS)


def ledger_of(line: dict[str, Any]) -> str:
    if line["billLineType"] == 250:
        return TAX_LEDGER
    if line["billLineType"] == 190:
        return CANCELLATION_LEDGER
    return REVENUE_LEDGERS.get(line["resourceType"] or "", "8900")


class FinanceMixin:
    """Journal entries follow the bills: credit on booking, reversal on cancel, delta on change."""

    def _post(
        self, r: Any, lines: list[dict[str, Any]], sign: int, t: datetime, comment: str
    ) -> None:
        groups: dict[str, list[int]] = {}
        for ln in lines:
            tot = round(ln["total"] * 100)
            g = groups.setdefault(ledger_of(ln), [0, 0])
            g[0] += tot
            g[1] += tot - _vat_in(tot, ln["vatRate"])
        rec = r.rec
        ti = r.ti
        key = (ti.company_id, r.ch.currency)
        mdate = dstr(t.toordinal())
        for ledger, (incl, excl) in groups.items():
            incl *= sign
            excl *= sign
            if incl == 0:
                continue
            cr = incl > 0
            # the fields after (journalEntryId, reportId, type, reportNumber), in record order
            entry = (
                mdate,
                r.rid,
                rec["reservationNumber"],
                ti.location_id,
                ti.code,
                ledger,
                DEBTORS_LEDGER,
                ti.location_code,
                0.0 if cr else -incl / 100,
                incl / 100 if cr else 0.0,
                0.0 if cr else -excl / 100,
                excl / 100 if cr else 0.0,
                rec["customerId"],
                r.ch.channel_id,
                r.acc_rr["reservedResourceId"],
                comment,
            )
            if self._generating:
                self._post_buffer.append((t, key, entry))
            else:
                self._add_entry(t, key, entry)

    def _report(self, key: tuple[int, str], day: date) -> dict[str, Any]:
        rkey = (key[0], key[1], day.year, day.month)
        rep = self._reports.get(rkey)
        if rep is None:
            tbl = self.t["journalreports"]
            n = self._report_numbers.get(key[0], 0) + 1
            self._report_numbers[key[0]] = n
            first = day.replace(day=1)
            last = day.replace(day=calendar.monthrange(day.year, day.month)[1])
            rep = tbl.add(
                {
                    "journalReportId": tbl.new_id(),
                    "companyId": key[0],
                    "reportNumber": n,
                    "type": "MUTATION_REPORT",
                    "periodFrom": first.isoformat(),
                    "periodTo": last.isoformat(),
                    "createdDate": dtstr(datetime(first.year, first.month, 1, 0, 5)),
                    "currencyCode": key[1],
                }
            )
            self._reports[rkey] = rep
        return rep

    def _add_entry(self, t: datetime, key: tuple[int, str], entry: tuple[Any, ...]) -> None:
        rep = self._report(key, t.date())
        tbl = self.t["journalentries"]
        tbl.add(
            _ENTRY(
                tbl.new_id(), rep["journalReportId"], "MUTATION_REPORT", rep["reportNumber"], *entry
            )
        )

    def _flush_postings(self) -> None:
        buf = self._post_buffer
        self._post_buffer = []
        buf.sort(key=lambda p: p[0])
        tbl = self.t["journalentries"]
        reports = self._reports
        rep = None
        last = None
        for t, key, entry in buf:
            day = t.date()
            rk = (key, day.year, day.month)
            if rk != last:
                rep = reports.get((key[0], key[1], day.year, day.month)) or self._report(key, day)
                last = rk
            tbl.add(
                _ENTRY(
                    tbl.new_id(),
                    rep["journalReportId"],
                    "MUTATION_REPORT",
                    rep["reportNumber"],
                    *entry,
                )
            )
        buf.clear()

    # cash ------------------------------------------------------------------------------------
    def _build_cash_accounts(self) -> None:
        tbl = self.t["cashaccounts"]
        for loc in self.t["locations"].records():
            lid = loc["locationId"]
            comp = self.location_company[lid]
            tbl.add(
                {
                    "cashAccountId": lid,
                    "companyId": comp,
                    "locationId": lid,
                    "code": f"{loc['code']}-RECEPTION",
                    "name": f"Reception {loc['translations'][0]['name']}",
                    "currencyCode": self.company_currency[comp],
                }
            )
        self._cash_state = {lid: [0, 20000] for lid in self.location_company}  # number, balance
        self._cash_day = self.ord0  # next day to clear

    def _clear_cash_until(self, now: datetime) -> None:
        """One clearance per account per day, made at 22:00 on that day, up to `now`."""
        py = self.py
        tbl = self.t["cashclearances"]
        while at(self._cash_day, 22) <= now:
            d = self._cash_day
            for acc in self.t["cashaccounts"].records():
                st = self._cash_state[acc["cashAccountId"]]
                st[0] += 1
                start = st[1]
                sales = int(py.lognormvariate(11.0, 0.7)) if py.random() < 0.97 else 0
                expected = start + sales
                diff = 0
                reason = None
                if py.random() < 0.08:
                    diff = py.choice((-1, 1)) * py.randint(5, 2000)
                    reason = py.choice(("Counting error", "Change given wrongly", "Unknown"))
                counted = expected + diff
                card = int(sales * py.uniform(0.5, 0.8))
                cheque = 0
                ancv = 0
                cash = counted - card
                nxt = 20000
                cleared = at(d, 21) + timedelta(
                    minutes=py.randint(0, 59), seconds=py.randint(0, 59)
                )
                tbl.add(
                    {
                        "cashClearanceId": tbl.new_id(),
                        "cashAccountId": acc["cashAccountId"],
                        "clearanceNumber": st[0],
                        "clearanceDate": dstr(d),
                        "clearedAt": dtstr(cleared),
                        "startBalance": start / 100,
                        "expectedAmount": expected / 100,
                        "countedCash": cash / 100,
                        "countedCard": card / 100,
                        "countedCheque": cheque / 100,
                        "countedAncv": ancv / 100,
                        "difference": diff / 100,
                        "differenceReason": reason,
                        "startBalanceNextDay": nxt / 100,
                        "employeeId": py.randint(1, 40),
                    }
                )
                st[1] = nxt
            self._cash_day += 1
