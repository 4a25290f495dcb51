"""The figures the app and the feed must show, queried straight from the marts here (by the
mart's own column names), independently of `warehouse.semantic_query`."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from tests.serve.conftest import Built

DATE_COL = {
    "marts.sales_daily": "date_day",
    "marts.occupancy_daily": "date_day",
    "marts.revenue_daily": "date_day",
    "marts.forecast_daily": "stay_date",
    "marts.cancellations_monthly": "month_start",
    "marts.orphan_nights": "date_day",
}
COLUMNS = {
    "marts.sales_daily": {
        "park": "location_id",
        "accommodation_type": "accommodation_type_id",
        "channel": "distribution_channel_id",
        "booking_window": "booking_window",
        "currency": "currency_code",
    },
    "marts.occupancy_daily": {"park": "location_id", "accommodation_type": "accommodation_type_id"},
    "marts.revenue_daily": {
        "park": "location_id",
        "accommodation_type": "accommodation_type_id",
        "currency": "currency_code",
    },
    "marts.forecast_daily": {"currency": "currency_code"},
    "marts.cancellations_monthly": {"park": "location_id", "currency": "currency_code"},
    "marts.orphan_nights": {"park": "location_id", "accommodation_type": "accommodation_type_id"},
}
TIME = {
    "night": "{d}",
    "month": "cast(date_trunc('month', {d}) as date)",
    "year": "year({d})",
    "weekday": "isodow({d})",
}


def has(table: str, dim: str) -> bool:
    return dim in TIME or dim in COLUMNS[table]


def sums(
    built: Built,
    table: str,
    column: str,
    keys: list[str],
    lo: date,
    hi: date,
    filters: dict[str, list[Any]] | None = None,
) -> dict[tuple[Any, ...], Any]:
    d = DATE_COL[table]
    exprs = [TIME[k].format(d=d) if k in TIME else COLUMNS[table][k] for k in keys]
    where, params = [f"{d} between ? and ?"], [lo, hi]
    for dim, values in (filters or {}).items():
        if has(table, dim):
            col = TIME[dim].format(d=d) if dim in TIME else COLUMNS[table][dim]
            where.append(f"{col} in ({', '.join('?' for _ in values)})")
            params += values
    group = f" group by {', '.join(str(i + 1) for i in range(len(exprs)))}" if exprs else ""
    sql = f"select {', '.join([*exprs, f'sum({column})'])} from {table} where {' and '.join(where)}"
    return {tuple(r[:-1]): r[-1] for r in built.rows(sql + group, params)}


def money_per(n: Any, d: Any) -> Decimal | None:
    """Money / count to the cent, half away from zero (the marts' rule)."""
    if not d:
        return None
    return (Decimal(n) / Decimal(d)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def ratio(n: Any, d: Any) -> float | None:
    return float(n) / float(d) if d else None


def pct(value: float | None) -> str:
    """The page's percentage text."""
    if value is None:
        return "–"
    return f"{(Decimal(str(value)) * 100).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP):,} %"


def money(value: Any, currency: str) -> str:
    return f"{currency} {Decimal(value).quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"
