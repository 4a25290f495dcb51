"""Values to display text (escaping, numbers, money, percentages, dates) and date helpers."""

from __future__ import annotations

import html
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _dec(value: object) -> Decimal | None:
    if value is None:
        return None
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _ratio(num: object, den: object) -> Decimal | None:
    n, d = _dec(num), _dec(den)
    if n is None or d is None or d == 0:
        return None
    return n / d


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


def _signed_pct(value: object) -> str:
    v = _dec(value)
    if v is None:
        return "–"
    return ("+" if v > 0 else "") + _pct(v)


def _day(d: date) -> str:
    return f"{d:%a} {d.day} {d:%b %Y}"


def _month(d: date) -> str:
    return f"{d:%b %Y}"


def _f(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _as_date(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def _date_range(first: date, last: date) -> list[date]:
    """Every day from `first` to `last`, both included."""
    return [first + timedelta(n) for n in range((last - first).days + 1)]
