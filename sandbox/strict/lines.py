"""The bill-line types the default world never bills, as the strict profile serves them.

real-service-notes 4.4 lists WARRANT (50), STAY_ARTICLE (130), WITHHOLDINGARTICLE (140) and
COST_TYPE (180) among the bill-line types; the default world bills none of them. The strict
profile adds them without changing what any reservation earns, so the ground truth stays right:

- STAY_ARTICLE (130): a seeded share of the per-stay add-on lines (an EXTRA line without a period
  of its own, e.g. final cleaning) is served as type 130 instead of 10. It stays an item line in
  the TOTAL; its revenue class is `extra` (docs/metrics.md).
- WARRANT (50, a refundable deposit), WITHHOLDINGARTICLE (140, an amount withheld on the agent's
  bill) and COST_TYPE (180, a cost breakdown line) are added to a seeded share of the bills. They
  are outside the bill's TOTAL and never revenue (the notes give them no meaning beyond their
  names; docs/contracts.md, "Bill rules").

Added lines have ids from `ADDED_LINE_BASE` up (above any id the world issues), derived from the
reservation id, so they are stable across requests and world changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sandbox.protocol import Record
from sandbox.strict.shape import draw

STAY_ARTICLE = 130
STAY_ARTICLE_SHARE = 0.6  # of the per-stay add-on lines
ADDED_LINE_BASE = 9_000_000_000
# bill-line type -> (payer whose bill gets it, share of those bills, description, amount)
ADDED_LINES: dict[int, tuple[str, float, str, float]] = {
    50: ("CUSTOMER", 0.25, "Deposit (refundable)", 100.0),
    140: ("AGENT", 0.5, "Withholding", 5.0),
    180: ("CUSTOMER", 0.2, "Cost type: administration", 15.0),
}
_SLOT = {50: 0, 140: 1, 180: 2}


def is_added(line_id: int) -> bool:
    return line_id >= ADDED_LINE_BASE


def added_id(reservation_id: int, line_type: int) -> int:
    return ADDED_LINE_BASE + int(reservation_id) * 4 + _SLOT[line_type]


def retype(seed: int, line: Record) -> Record:
    """A per-stay add-on line served as STAY_ARTICLE (130) for a seeded share of them."""
    if (
        line.get("billLineType") == 10
        and line.get("resourceType") == "EXTRA"
        and line.get("startDate") is None
        and draw(seed, "billlines", line.get("reservationBillLineId"), "~type") < STAY_ARTICLE_SHARE
    ):
        return {**line, "billLineType": STAY_ARTICLE}
    return line


def added_lines(seed: int, reservation_id: int, lines: Sequence[Record]) -> list[Record]:
    """The lines of types 50, 140 and 180 this reservation's bills carry in the strict profile
    (in id order), given the world's lines of the reservation."""
    bills: dict[str, int] = {}
    for line in lines:
        payer, bill = line.get("payerType"), line.get("reservationBillId")
        if isinstance(payer, str) and isinstance(bill, int):
            bills.setdefault(payer, bill)
    out: list[Record] = []
    for line_type, (payer, share, description, amount) in ADDED_LINES.items():
        bill = bills.get(payer)
        if bill is None or draw(seed, "reservations", reservation_id, f"~line{line_type}") >= share:
            continue
        out.append(_line(reservation_id, bill, payer, line_type, description, amount))
    return out


def _line(
    reservation_id: int, bill: int, payer: str, line_type: int, description: str, amount: float
) -> dict[str, Any]:
    return {
        "reservationBillLineId": added_id(reservation_id, line_type),
        "reservationBillId": bill,
        "reservationId": reservation_id,
        "payerType": payer,
        "billLineType": line_type,
        "resourceId": None,
        "resourceType": None,
        "reservedResourceId": None,
        "rateId": None,
        "rateTypeId": None,
        "description": description,
        "quantity": 1,
        "multiplier": 1,
        "value": amount,
        "total": amount,
        "vatRate": 0.0,
        "startDate": None,
        "endDate": None,
    }
