"""What the bulk history's parts share: the typed state of the closed stays (`Frozen`), the
state and plan codes, and the dtypes of the bill line columns while they are built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .billing import (
    VAT_EXTRA,
    VAT_RENT,
)
from .states import CODES, HOLDING, ON_BOOKS

S = CODES
INF = np.iinfo(np.int64).max
ON_BOOKS_C = np.array(sorted(CODES[s] for s in ON_BOOKS), dtype=np.int16)
HOLDING_C = np.array(sorted(CODES[s] for s in HOLDING), dtype=np.int16)
CANCELLED_C = np.array([S["CANCELLED"], S["DEF_CANCELLED"]], dtype=np.int16)
PAYERS = ("CUSTOMER", "PAYING_CUSTOMER", "AGENT")
RES_TYPES = ("ACCOMMODATIONTYPE", "SPECIAL", "EXTRA")
# rent, discount, extras, tourist tax, cancellation compensation
LEDGERS = ("8000", "8050", "8100", "1750", "8300")
COMMENTS = (
    "booking",
    "reversal",
    "stay extension",
    "cancellation compensation",
    "compensation reversal",
)
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
    # cancellations: the time (ms, -1 = never) and the bills' value (cents, tourist tax left
    # out) when cancelled; the compensation that replaced it is on the bill lines (190)
    cancel_ms: np.ndarray
    cancel_value: np.ndarray


def _isin(a: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return np.isin(a, codes)


def _rep_offsets(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row of each item, offset of the item within its row) for `counts` items per row."""
    rows = np.repeat(np.arange(len(counts)), counts)
    offs = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    return rows, offs
