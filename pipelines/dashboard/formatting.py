"""Values to display text: escaping, numbers, money (exact, per currency), percentages, dates."""

from __future__ import annotations

import html
from datetime import date
from decimal import ROUND_HALF_UP, Decimal


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _dec(value: object) -> Decimal | None:
    if value is None:
        return None
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _pct(value: object, digits: int = 1) -> str:
    v = _dec(value)
    if v is None:
        return "–"
    q = Decimal(1).scaleb(-digits)
    return f"{(v * 100).quantize(q, rounding=ROUND_HALF_UP):,} %"


def _money(value: object, currency: str) -> str:
    v = _dec(value)
    if v is None:
        return "–"
    return f"{currency} {v.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"


def _num(value: object, digits: int = 0) -> str:
    v = _dec(value)
    if v is None:
        return "–"
    return f"{v.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP):,}"


def _day(d: date) -> str:
    return f"{d:%a} {d.day} {d:%b %Y}"


def _month(d: date) -> str:
    return f"{d:%b %Y}"
