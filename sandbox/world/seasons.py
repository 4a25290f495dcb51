"""How busy the parks are through the year, and the codes the generated history picks from."""

from __future__ import annotations

from datetime import date

import numpy as np

from .clock import weekday
from .reference import CHANNELS

CATS = ("GUEST", "GROUP", "OWNER", "BLOCK")
CH_CODES = tuple(c[0] for c in CHANNELS)
# channel mix by the park's company currency (weights over CH_CODES)
CH_MIX = {
    "EUR": np.array([0.42, 0.13, 0.05, 0.28, 0.12]),
    "GBP": np.array([0.05, 0.05, 0.50, 0.20, 0.20]),
}
DUR_FRI = ((2, 0.35), (3, 0.30), (7, 0.25), (14, 0.10))
DUR_MON = ((4, 0.60), (7, 0.30), (11, 0.10))
DUR_OTHER = ((2, 0.25), (3, 0.25), (4, 0.25), (7, 0.25))


def _pick(table: tuple[tuple[int, float], ...], u: float) -> int:
    acc = 0.0
    for v, w in table:
        acc += w
        if u < acc:
            return v
    return table[-1][0]


def _season_target(o: int) -> float:
    """Target occupancy of a night: the seasonality of a holiday park."""
    d = date.fromordinal(o)
    m, dd = d.month, d.day
    if (m == 12 and dd >= 20) or (m == 1 and dd <= 5):
        p = 0.85
    elif m in (7, 8):
        p = 0.9
    elif (m == 4 and dd >= 26) or (m == 5 and dd <= 5) or (m == 10 and 17 <= dd <= 25):
        p = 0.8
    elif m in (4, 5, 6, 9, 10):
        p = 0.58
    else:
        p = 0.33
    if weekday(o) in (4, 5):
        p = min(0.95, p + 0.1)
    return p
