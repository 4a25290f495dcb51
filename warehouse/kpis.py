"""Headline KPIs for the end of a run: a few numbers that show the warehouse answers questions.

Occupancy over all units, and ADR / RevPAR excluding VAT (the metrics.md / USALI basis) per
currency (never summed across currencies), for the 30 nights before the reference date (the
warehouse's as-of date: the service's date) and the 30 nights on the books after it, read from
`marts.kpi_window`. The dashboard and `reservoir serve` read the same figures through the
metrics feed (`warehouse.semantic_query`), which tests/serve/test_feed.py holds equal to it.
"""

from __future__ import annotations

from datetime import date, timedelta

import duckdb

from warehouse import asof

WINDOW_DAYS = 30

_WINDOW = """
select currency_code, nights_available, occupancy, adr_net, revpar_net
from marts.kpi_window($lo, $hi)
"""


def _window(
    con: duckdb.DuckDBPyConnection, label: str, lo: date, hi: date
) -> list[tuple[str, str]]:
    """The window's KPIs as the warehouse defines them (`marts.kpi_window`, nights lo..hi-1)."""
    rows = con.execute(_WINDOW, {"lo": lo, "hi": hi - timedelta(days=1)}).fetchall()
    lines: list[tuple[str, str]] = []
    if rows and rows[0][1]:
        lines.append((f"occupancy, {label}", f"{rows[0][2]:.1%}"))
    sales = [r for r in rows if r[0] is not None and r[3] is not None]
    for currency, _available, _occupancy, adr, revpar in sales:
        value = f"{currency} {adr:,.2f}"
        # With several currencies each RevPAR is only that currency's contribution, so it is
        # shown when one currency carries all revenue.
        if len(sales) == 1 and revpar is not None:
            value += f"  (RevPAR {currency} {revpar:,.2f})"
        lines.append((f"ADR excl. VAT, {label}", value))
    return lines


def headline(con: duckdb.DuckDBPyConnection, today: str | None = None) -> list[tuple[str, str]]:
    """KPI name/value pairs around `today`, by default the warehouse's as-of date (the service's
    date at the last run, `warehouse.asof`): the same "today" as the dashboard's tiles."""
    if today:
        ref = date.fromisoformat(today)
    else:
        found = asof.read(con)
        if found is None or found.as_of is None:
            return []
        ref = found.as_of
    window = timedelta(days=WINDOW_DAYS)
    return [
        *_window(con, f"last {WINDOW_DAYS} nights to {ref}", ref - window, ref),
        *_window(con, f"next {WINDOW_DAYS} nights on the books", ref, ref + window),
    ]
