"""Windows, sizes and colours shared by the dashboard's queries, charts and style."""

PAST_DAYS = 90
FUTURE_DAYS = 90
KPI_DAYS = 30
PACE_HORIZONS = (30, 60, 90)
PICKUP_DAYS = 7
MONTHS_SHOWN = 12
RATE_TYPES_CHARTED = 6
CHART_WIDTH = 1160
PALETTE = (
    "#2563eb",
    "#f59e0b",
    "#10b981",
    "#e11d48",
    "#8b5cf6",
    "#0891b2",
    "#db2777",
    "#65a30d",
    "#64748b",
    "#b45309",
)
HEAT_STOPS = (
    (0.0, "#f4f8fc"),
    (0.3, "#bcd5ec"),
    (0.6, "#5b9bd0"),
    (0.85, "#1f5fa8"),
    (1.0, "#0b2f66"),
)
NO_SUPPLY = "#e5e7eb"
TODAY_COLOUR = "#f97316"
