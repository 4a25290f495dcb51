"""Bills per payer type, built exactly by the bill rules in docs/contracts.md.

All amounts are integer cents internally; records carry `cents / 100`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sandbox.world.block import record_factory

from .clock import dstr
from .reference import ADDONS

BILL_LINE_FIELDS = (
    "reservationBillLineId",
    "reservationBillId",
    "reservationId",
    "payerType",
    "billLineType",
    "resourceId",
    "resourceType",
    "reservedResourceId",
    "rateId",
    "rateTypeId",
    "description",
    "quantity",
    "multiplier",
    "value",
    "total",
    "vatRate",
    "startDate",
    "endDate",
)
_BILL_LINE = record_factory("BillLine", BILL_LINE_FIELDS)

TOURIST_TAX = 250  # cents per person-night
VAT_RENT = 9.0
VAT_EXTRA = 21.0
VAT_COMMISSION = 21
SUMMARY_ORDER = (
    (40, "Subtotal"),
    (60, "Included VAT"),
    (70, "Total"),
    (80, "Paid amount"),
    (90, "Due amount"),
    (100, "Commission"),
    (110, "Commission VAT"),
    (120, "To pay"),
)
ITEM_TYPES = frozenset({10, 20, 190, 250})


class Bill:
    """One payer's bill: item lines, summary lines and the running figures in cents."""

    __slots__ = (
        "bill_id",
        "comm",
        "comm_vat",
        "items",
        "paid",
        "payer",
        "pct",
        "summary",
        "tax",
        "total",
        "vat",
    )

    def __init__(self, bill_id: int, payer: str, pct: int) -> None:
        self.bill_id = bill_id
        self.payer = payer
        self.pct = pct
        self.items: list[dict[str, Any]] = []
        self.summary: dict[int, dict[str, Any]] = {}
        self.total = 0
        self.tax = 0
        self.vat = 0
        self.comm = 0
        self.comm_vat = 0
        self.paid = 0

    def to_pay(self) -> int:
        return self.total - self.comm - self.comm_vat - self.paid


def _vat_in(total: int, rate: float) -> int:
    return round(total * rate / (100 + rate))


class BillingMixin:
    """Creates and updates bill lines; keeps summary lines equal to the item lines."""

    def _line(
        self,
        r: Any,
        bill: Bill,
        line_type: int,
        resource_id: int | None,
        resource_type: str | None,
        rr_id: int | None,
        rate_id: int | None,
        description: str,
        qty: int,
        mult: int,
        value: int,
        total: int,
        vat: float,
        start: int | None,
        end: int | None,
    ) -> dict[str, Any]:
        tbl = self.t["billlines"]
        rec = _BILL_LINE(
            tbl.new_id(),
            bill.bill_id,
            r.rid,
            bill.payer,
            line_type,
            resource_id,
            resource_type,
            rr_id,
            rate_id,
            r.rt if line_type == 10 and resource_type != "EXTRA" else None,
            description,
            qty,
            mult,
            value / 100,
            total / 100,
            vat,
            None if start is None else dstr(start),
            None if end is None else dstr(end),
        )
        tbl.add(rec)
        if line_type in ITEM_TYPES:
            bill.items.append(rec)
            bill.total += total
            if line_type == 250:
                bill.tax += total
            bill.vat += round(total * vat / (100 + vat))
        return rec

    def _new_bill(self, r: Any, payer: str, pct: int) -> Bill:
        self._bill_seq += 1
        bill = Bill(self._bill_seq, payer, pct)
        r.bills[payer] = bill
        return bill

    def _close_bill(self, r: Any, bill: Bill) -> None:
        """Append the summary lines (after the item lines, so line ids follow bill order)."""
        tbl = self.t["billlines"]
        rid, bill_id, payer = r.rid, bill.bill_id, bill.payer
        agent = payer == "AGENT"
        summary = bill.summary
        for code, desc in SUMMARY_ORDER:
            if code in (100, 110) and not agent:
                continue
            summary[code] = tbl.add(
                _BILL_LINE(
                    tbl.new_id(),
                    bill_id,
                    rid,
                    payer,
                    code,
                    None,
                    None,
                    None,
                    None,
                    None,
                    desc,
                    1,
                    1,
                    0.0,
                    0.0,
                    0.0,
                    None,
                    None,
                )
            )
        self._refresh_bill(bill)

    def _refresh_bill(self, bill: Bill) -> None:
        if bill.payer == "AGENT":
            bill.comm = round(bill.total * bill.pct / 100)
            bill.comm_vat = round(bill.comm * VAT_COMMISSION / 100)
        s = bill.summary
        total, paid = bill.total, bill.paid
        for code, rec in s.items():
            if code == 40:
                c = total - bill.tax
            elif code == 60:
                c = bill.vat
            elif code == 70:
                c = total
            elif code == 80:
                c = paid
            elif code == 90:
                c = total - paid
            elif code == 100:
                c = bill.comm
            elif code == 110:
                c = bill.comm_vat
            else:
                c = total - bill.comm - bill.comm_vat - paid
            v = c / 100
            rec["value"] = v
            rec["total"] = v

    def _stay_items(
        self, r: Any, first: int, nights: int, *, initial: bool, override: int | None = None
    ) -> list[dict[str, Any]]:
        """Item lines for nights [first, first + nights): rent runs, pets, tourist tax (+ extras)."""
        lines: list[dict[str, Any]] = []
        rent_bill = r.bills[r.rent_payer]
        cust = r.bills["CUSTOMER"]
        ti = r.ti
        rr_id = r.acc_rr["reservedResourceId"]
        if r.category not in ("OWNER", "BLOCK"):
            stay = (r.arr, r.dep - r.arr, r.created.toordinal())
            for start, n, price, rate_id in self.price_runs(
                ti.idx, r.rt, first, nights, override, stay=stay
            ):
                lines.append(
                    self._line(
                        r,
                        rent_bill,
                        10,
                        ti.resource_id,
                        "ACCOMMODATIONTYPE",
                        rr_id,
                        rate_id,
                        f"Rent {ti.code}",
                        n,
                        1,
                        price,
                        price * n,
                        VAT_RENT,
                        start,
                        start + n,
                    )
                )
            if initial and r.discount_pct:
                rent = sum(round(x["total"] * 100) for x in lines)
                disc = -round(rent * r.discount_pct / 100)
                lines.append(
                    self._line(
                        r,
                        rent_bill,
                        10,
                        ADDONS["EARLYBIRD"][0],
                        "SPECIAL",
                        rr_id,
                        None,
                        ADDONS["EARLYBIRD"][1],
                        1,
                        1,
                        disc,
                        disc,
                        VAT_RENT,
                        first,
                        first + nights,
                    )
                )
        if r.category == "BLOCK":
            return lines
        for code, rr in r.extra_rrs.items():
            rid, name, price, vat, per = ADDONS[code]
            if per == "PET_NIGHT":
                lines.append(
                    self._line(
                        r,
                        cust,
                        10,
                        rid,
                        "EXTRA",
                        rr["reservedResourceId"],
                        None,
                        name,
                        nights,
                        r.pets,
                        price,
                        price * nights * r.pets,
                        vat,
                        first,
                        first + nights,
                    )
                )
            elif initial and per == "PERSON":
                q = rr["quantity"]
                lines.append(
                    self._line(
                        r,
                        cust,
                        10,
                        rid,
                        "EXTRA",
                        rr["reservedResourceId"],
                        None,
                        name,
                        q,
                        1,
                        price,
                        price * q,
                        vat,
                        first,
                        first + nights,
                    )
                )
            elif initial and per == "STAY":
                lines.append(
                    self._line(
                        r,
                        cust,
                        10,
                        rid,
                        "EXTRA",
                        rr["reservedResourceId"],
                        None,
                        name,
                        1,
                        1,
                        price,
                        price,
                        vat,
                        None,
                        None,
                    )
                )
        if r.persons:
            q = r.persons * nights
            lines.append(
                self._line(
                    r,
                    cust,
                    250,
                    None,
                    None,
                    None,
                    None,
                    "Tourist tax",
                    q,
                    1,
                    TOURIST_TAX,
                    TOURIST_TAX * q,
                    0.0,
                    first,
                    first + nights,
                )
            )
        return lines

    def _build_bills(self, r: Any, override: int | None = None) -> None:
        cust = self._new_bill(r, "CUSTOMER", 0)
        other = None
        if r.rent_payer != "CUSTOMER":
            other = self._new_bill(r, r.rent_payer, r.ch.commission)
        self._stay_items(r, r.arr, r.dep - r.arr, initial=True, override=override)
        self._close_bill(r, cust)
        if other is not None:
            self._close_bill(r, other)

    def _pay(self, r: Any, payer: str, amount: int | None, t: datetime) -> int:
        """Register a payment (None = everything outstanding); returns the cents paid."""
        bill = r.bills.get(payer)
        if bill is None:
            return 0
        due = bill.to_pay()
        amt = due if amount is None else min(amount, due)
        if amt <= 0:
            return 0
        bill.paid += amt
        self._refresh_bill(bill)
        r.touch(t)
        self._event("RESERVATION_EVENT", r.rid, "UPDATE", t)
        self._hook("payment_received", r, t, amount=amt / 100, currencyCode=r.ch.currency)
        self.n_payments += 1
        return amt
