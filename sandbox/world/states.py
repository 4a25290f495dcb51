"""Reservation states and the legal moves between them (the interface's state table)."""

from __future__ import annotations

CODES: dict[str, int] = {
    "INIT": 0,
    "DELETED": -99,
    "QUOTATION": -5,
    "REQUEST": 10,
    "OPTIONAL": 11,
    "PROVISIONAL": 12,
    "DEFINITIVE": 21,
    "CHECKED_IN": 31,
    "CHECKED_OUT": 41,
    "DECLINED": -10,
    "CANCELLED": -12,
    "DEF_CANCELLED": -13,
    "EXPIRED": -11,
}
NAMES: dict[int, str] = {v: k for k, v in CODES.items()}

# States a reservation may be created in (INIT by the booking flow, the others "confirmed at creation").
INITIAL: frozenset[str] = frozenset(
    {"INIT", "OPTIONAL", "QUOTATION", "REQUEST", "PROVISIONAL", "DEFINITIVE"}
)

# Every row of the state table as (from, to). Nothing else is ever allowed.
MOVES: frozenset[tuple[str, str]] = frozenset(
    {
        ("INIT", "DELETED"),
        ("INIT", "OPTIONAL"),
        ("INIT", "PROVISIONAL"),
        ("QUOTATION", "PROVISIONAL"),
        ("QUOTATION", "DEFINITIVE"),
        ("QUOTATION", "DECLINED"),
        ("OPTIONAL", "PROVISIONAL"),
        ("OPTIONAL", "DEFINITIVE"),
        ("OPTIONAL", "DECLINED"),
        ("REQUEST", "DECLINED"),
        ("REQUEST", "PROVISIONAL"),
        ("REQUEST", "DEFINITIVE"),
        ("PROVISIONAL", "CANCELLED"),
        ("PROVISIONAL", "DECLINED"),
        ("PROVISIONAL", "DEFINITIVE"),
        ("DEFINITIVE", "CANCELLED"),
        ("DEFINITIVE", "CHECKED_IN"),
        ("CHECKED_IN", "CHECKED_OUT"),
        ("OPTIONAL", "EXPIRED"),
        ("QUOTATION", "EXPIRED"),
        ("CANCELLED", "DEF_CANCELLED"),
        ("CANCELLED", "PROVISIONAL"),
        ("CANCELLED", "DEFINITIVE"),
    }
)

ON_BOOKS: frozenset[str] = frozenset({"PROVISIONAL", "DEFINITIVE", "CHECKED_IN", "CHECKED_OUT"})
HELD: frozenset[str] = frozenset({"REQUEST", "OPTIONAL"})
# States whose reservation occupies its unit (INIT too: a booking in progress locks the unit).
HOLDING: frozenset[str] = ON_BOOKS | HELD | {"INIT"}
CANCELLED_STATES: frozenset[str] = frozenset({"CANCELLED", "DEF_CANCELLED"})
ON_BOOKS_CODES: frozenset[int] = frozenset(CODES[s] for s in ON_BOOKS)


def legal(src: str | None, dst: str) -> bool:
    """True when `src -> dst` is a row of the state table (src None = creation)."""
    if src is None:
        return dst in INITIAL
    return (src, dst) in MOVES


def history_is_legal(history: list[tuple[object, str]]) -> bool:
    """Check a whole status history [(time, status), ...] against the table."""
    prev: str | None = None
    for _, st in history:
        if not legal(prev, st):
            return False
        prev = st
    return True
