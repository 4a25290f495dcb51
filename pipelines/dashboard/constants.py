"""Colours shared by the charts."""

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
