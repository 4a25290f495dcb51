"""The page's sections in order: id, title, introduction and the function drawing the body.

The headline tiles above them (`performance._kpis`) are drawn by `build.render_dashboard` itself.
"""

from __future__ import annotations

from collections.abc import Callable

from pipelines.dashboard.marts import _Ctx
from pipelines.dashboard.sections.bookings import _cancellations, _channel_mix, _pace
from pipelines.dashboard.sections.performance import _occupancy, _revenue
from pipelines.dashboard.sections.rates import _rates

SECTIONS: tuple[tuple[str, str, str, Callable[[_Ctx], str]], ...] = (
    (
        "occupancy",
        "Occupancy by night and accommodation type",
        "Nights sold / nights available per night. Darker is fuller; nights from today on show "
        "what is on the books now. Hover a cell for the figures.",
        _occupancy,
    ),
    (
        "revenue",
        "ADR and RevPAR over time",
        "Daily, per currency (figures in different currencies are never added together).",
        _revenue,
    ),
    (
        "pace",
        "Booking pace against last year",
        "Nights on the books for the coming stay nights against the same stay nights last year "
        "at the same number of days before arrival.",
        _pace,
    ),
    (
        "channels",
        "Channel mix",
        "Share of nights sold and of room revenue per distribution channel.",
        _channel_mix,
    ),
    ("cancellations", "Cancellations", "By the month the reservation was created.", _cancellations),
    (
        "rates",
        "List price against realised price",
        "The published nightly list price against the ADR actually realised, and the "
        "availability left.",
        _rates,
    ),
)
