"""Headline KPIs for the end of a run: a few numbers that show the warehouse answers questions.

Occupancy over all units, and ADR / RevPAR per currency (never summed across currencies), for
the 30 nights before the reference date and the 30 nights on the books after it.
"""

from __future__ import annotations

from datetime import date, timedelta

import duckdb

WINDOW_DAYS = 30

_OCCUPANCY = """
select sum(nights_sold), sum(nights_available)
from marts.occupancy_daily
where date_day >= $lo and date_day < $hi
"""

# Supply repeats on every currency row of a key, so it is taken once per key from occupancy.
_REVENUE = """
with revenue as (
    select currency_code, sum(room_revenue) as room_revenue, sum(nights_sold) as nights_sold
    from marts.revenue_daily
    where date_day >= $lo and date_day < $hi
    group by currency_code
),
supply as (
    select sum(nights_available) as nights_available
    from marts.occupancy_daily
    where date_day >= $lo and date_day < $hi
)
select currency_code, room_revenue, nights_sold, nights_available
from revenue, supply
where nights_sold > 0
order by currency_code
"""


def _window(
    con: duckdb.DuckDBPyConnection, label: str, lo: date, hi: date
) -> list[tuple[str, str]]:
    params = {"lo": lo, "hi": hi}
    sold, available = con.execute(_OCCUPANCY, params).fetchone() or (None, None)
    lines: list[tuple[str, str]] = []
    if available:
        lines.append((f"occupancy, {label}", f"{int(sold or 0) / int(available):.1%}"))
    rows = con.execute(_REVENUE, params).fetchall()
    for currency, revenue, nights, supply in rows:
        value = f"{currency} {revenue / nights:,.2f}"
        # RevPAR divides by every unit's nights; with several currencies each would be only a
        # contribution, so it is shown when one currency carries all revenue.
        if len(rows) == 1 and supply:
            value += f"  (RevPAR {currency} {revenue / supply:,.2f})"
        lines.append((f"ADR, {label}", value))
    return lines


def headline(con: duckdb.DuckDBPyConnection, today: str | None = None) -> list[tuple[str, str]]:
    """KPI name/value pairs; `today` defaults to the last night with stays on the books."""
    if today:
        ref = date.fromisoformat(today)
    else:
        row = con.execute(
            "select max(date_day) from marts.occupancy_daily where nights_sold > 0"
        ).fetchone()
        if not row or row[0] is None:
            return []
        ref = row[0]
    window = timedelta(days=WINDOW_DAYS)
    return [
        *_window(con, f"last {WINDOW_DAYS} nights to {ref}", ref - window, ref),
        *_window(con, f"next {WINDOW_DAYS} nights on the books", ref, ref + window),
    ]
