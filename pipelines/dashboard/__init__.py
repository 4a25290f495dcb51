"""The revenue manager's page over the marts, for `reservoir serve` and `reservoir dashboard`.

One data layer (`views`: every figure a metric of the feed, `warehouse.semantic_query`), one set
of charts (`figures`: plotly.js specifications) and one renderer (`page`, with `tables` and
`style`) serve both the live app, with its filters and drill-down, and the self-contained
snapshot, which inlines plotly.js and the page script (`scripts`) so it opens offline; a
Content-Security-Policy keeps both from calling out to the network. Money is only ever added
within one currency; ratios are recomputed from sums, never averaged.
"""

from __future__ import annotations

from pipelines.dashboard.build import (
    DashboardError,
    as_of,
    build_dashboard,
    open_warehouse,
    render_dashboard,
)
from pipelines.dashboard.views import Filters

__all__ = [
    "DashboardError",
    "Filters",
    "as_of",
    "build_dashboard",
    "open_warehouse",
    "render_dashboard",
]
