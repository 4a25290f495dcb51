"""`reservoir dashboard`: one self-contained HTML page drawn from the marts.

The page carries its own CSS and hand-drawn SVG charts and no script at all, so it opens
anywhere (mail attachment, file share, offline laptop) and cannot call out to the network; a
Content-Security-Policy says so to the browser too. Every figure is recomputed from additive
sums (nights, money) over the period shown, never by averaging ratios, and money is only ever
added up within one currency.

Modules: `marts` (the data layer: which marts and columns the warehouse has, labels, the query
context), `formatting` (values to text), `charts` (SVG), `markup` (tables and other HTML blocks),
`sections` (one function per page section, in page order), `style` (the CSS) and `build` (the
entry points re-exported here).
"""

from __future__ import annotations

from pipelines.dashboard.build import DashboardError, build_dashboard, render_dashboard
from pipelines.dashboard.constants import (
    CHART_WIDTH,
    FUTURE_DAYS,
    HEAT_STOPS,
    KPI_DAYS,
    MONTHS_SHOWN,
    NO_SUPPLY,
    PACE_HORIZONS,
    PALETTE,
    PAST_DAYS,
    PICKUP_DAYS,
    RATE_TYPES_CHARTED,
    TODAY_COLOUR,
)
from pipelines.dashboard.marts import AS_OF, CHANNEL, CURRENCY, DATE, MONTH
from pipelines.dashboard.sections import SECTIONS
from pipelines.dashboard.style import CSS

__all__ = [
    "AS_OF",
    "CHANNEL",
    "CHART_WIDTH",
    "CSS",
    "CURRENCY",
    "DATE",
    "FUTURE_DAYS",
    "HEAT_STOPS",
    "KPI_DAYS",
    "MONTH",
    "MONTHS_SHOWN",
    "NO_SUPPLY",
    "PACE_HORIZONS",
    "PALETTE",
    "PAST_DAYS",
    "PICKUP_DAYS",
    "RATE_TYPES_CHARTED",
    "SECTIONS",
    "TODAY_COLOUR",
    "DashboardError",
    "build_dashboard",
    "render_dashboard",
]
