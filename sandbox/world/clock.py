"""Date and time helpers: the wire formats and the day-ordinal arithmetic the world runs on."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

DEFAULT_NOW = datetime(2026, 11, 1, 0, 0)
WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")

_DATE_STR: dict[int, str] = {}


def dstr(ordinal: int) -> str:
    """ISO date of a day ordinal; cached so millions of records share one string per day."""
    s = _DATE_STR.get(ordinal)
    if s is None:
        s = _DATE_STR[ordinal] = date.fromordinal(ordinal).isoformat()
    return s


def dtstr(dt: datetime) -> str:
    """`yyyy-MM-ddTHH:mm:ss.SSS`, UTC without offset, as the real service writes datetimes."""
    return dt.isoformat(timespec="milliseconds")


EPOCH = datetime(1970, 1, 1)
EPOCH_ORD = EPOCH.toordinal()
DAY_MS = 86_400_000


def to_ms(dt: datetime) -> int:
    """Milliseconds since 1970-01-01 of a naive UTC datetime."""
    return (dt - EPOCH) // timedelta(milliseconds=1)


def from_ms(value: int) -> datetime:
    return EPOCH + timedelta(milliseconds=int(value))


def ms_str(value: int) -> str:
    """`dtstr` of a time given in milliseconds since 1970-01-01."""
    return (EPOCH + timedelta(milliseconds=value)).isoformat(timespec="milliseconds")


def weekday(ordinal: int) -> int:
    """Monday = 0 for a day ordinal (ordinal 1 = 0001-01-01 was a Monday)."""
    return (ordinal + 6) % 7


def at(ordinal: int, hours: float = 0.0) -> datetime:
    """Datetime at `hours` after midnight of a day ordinal, truncated to milliseconds."""
    dt = datetime.fromordinal(ordinal) + timedelta(hours=hours)
    return dt.replace(microsecond=dt.microsecond // 1000 * 1000)


def ms(dt: datetime) -> datetime:
    """Truncate to milliseconds (the wire precision) so stored and served times agree."""
    return dt.replace(microsecond=dt.microsecond // 1000 * 1000)


def parse_date(value: object) -> date:
    """Accept a date, a datetime or an ISO string."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        return date.fromisoformat(value[:10])
    raise ValueError(f"not a date: {value!r}")


def parse_datetime(value: object) -> datetime:
    """Accept `yyyy-MM-ddTHH:mm:ss[.SSS]` (UTC, no offset) or a datetime."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, str):
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if dt.tzinfo is not None:
            dt = dt.astimezone(UTC).replace(tzinfo=None)
        return dt
    raise ValueError(f"not a datetime: {value!r}")


def money(cents: int) -> float:
    """Cents as a JSON number with at most 2 decimals (c / 100 is the double nearest the decimal)."""
    return cents / 100


def cents(value: float | int) -> int:
    """Inverse of `money`, exact for any amount the world emits."""
    return round(value * 100)
