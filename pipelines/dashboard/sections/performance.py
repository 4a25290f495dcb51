"""Sections on how the nights perform: the headline tiles, occupancy, ADR and RevPAR.

Money figures are excluding VAT (the marts' `_net` columns, the metric definitions' basis)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta
from typing import Any

from pipelines.dashboard.charts import _heatmap, _line_chart, _Series
from pipelines.dashboard.constants import (
    KPI_DAYS,
    PALETTE,
)
from pipelines.dashboard.formatting import (
    _as_date,
    _date_range,
    _day,
    _e,
    _f,
    _money,
    _num,
    _pct,
    _ratio,
)
from pipelines.dashboard.markup import _empty, _table
from pipelines.dashboard.marts import CURRENCY, DATE, _Ctx


def _kpis(ctx: _Ctx) -> str:
    """Three tiles (occupancy, ADR, RevPAR), each for the last 30 and the next 30 nights."""
    periods = (
        ("Last 30 days", ctx.today - timedelta(KPI_DAYS), ctx.today - timedelta(1)),
        ("Next 30 days, on the books", ctx.today, ctx.today + timedelta(KPI_DAYS - 1)),
    )

    def tile(label: str, definition: str, halves: list[tuple[str, str]]) -> str:
        parts = "".join(
            f'<div class="half"><div class="tile-period">{_e(period)}'
            f'<span class="dates">{start:%d %b} – {end:%d %b %Y}</span></div>'
            f'<div class="tile-value">{value}</div><div class="tile-sub">{_e(note)}</div></div>'
            for (period, start, end), (value, note) in zip(periods, halves, strict=True)
        )
        return (
            f'<div class="tile"><div class="tile-label">{_e(label)}</div>'
            f'<div class="tile-def">{_e(definition)}</div><div class="halves">{parts}</div></div>'
        )

    occupancy: list[tuple[str, str]] = []
    adr: list[tuple[str, str]] = []
    revpar: list[tuple[str, str]] = []
    has_occ, has_rev = ctx.mart("occupancy_daily"), ctx.mart("revenue_daily")
    published = all(ctx.marts.get(m) is not None for m in ("occupancy_daily", "revenue_daily"))
    for _period, start, end in periods:
        # The one definition of the window KPIs, published with the marts (warehouse/macros.py).
        found = (
            ctx.rows(
                "select currency_code, nights_available, nights_sold, occupancy, adr_net, "
                "revpar_net "
                "from marts.kpi_window(?, ?)",
                [start, end],
            )
            if published
            else []
        )
        if has_occ is None or not found:
            occupancy.append(("–", "no occupancy data"))
        else:
            _cur, avail, sold, occ, _adr, _revpar = found[0]
            note = f"{_num(sold)} of {_num(avail)} nights sold" if avail else "no nights available"
            occupancy.append((_e(_pct(occ)), note))
        sales = [r for r in found if r[0] is not None] if has_rev is not None else []
        for out, column in ((adr, 4), (revpar, 5)):
            values = "".join(
                f'<span class="cur">{_e(_money(r[column], str(r[0])))}</span>' for r in sales
            )
            out.append((values or "–", "per currency" if sales else "no revenue data"))
    tiles = (
        tile("Occupancy", "nights sold / nights available", occupancy),
        tile("ADR", "room revenue excl. VAT / nights sold", adr),
        tile("RevPAR", "room revenue excl. VAT / nights available", revpar),
    )
    return f'<div class="tiles">{"".join(tiles)}</div>'


def _occupancy(ctx: _Ctx) -> str:
    mart = ctx.mart("occupancy_daily")
    if mart is None:
        return _empty("marts.occupancy_daily is empty.")
    d, loc = mart.q(*DATE), mart.q("location_code")
    typ, code = mart.q("accommodation_type_id"), mart.q("accommodation_type_code")
    sold_c, avail_c, hold = (
        mart.q("nights_sold"),
        mart.q("nights_available"),
        mart.q("owner_hold_nights"),
    )
    window = ctx.window(mart, d)
    assert window is not None
    start, end = window
    labels = ctx.labels()
    found = ctx.rows(
        f"select {typ}, {loc}, {code}, {d}, sum({sold_c}), sum({avail_c}), sum({hold}) "
        f"from {mart.ref} where {d} between ? and ? group by all order by 2, 3, 1, 4",
        [start, end],
    )
    cells: dict[str, dict[date, tuple[float, float, float]]] = defaultdict(dict)
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for type_id, location, acco, day, sold, avail, held in found:
        label = labels.type(type_id, f"{location} · {acco}")
        cells[label][_as_date(day)] = (float(sold or 0), float(avail or 0), float(held or 0))
        for i, v in enumerate((sold, avail, held)):
            totals[label][i] += float(v or 0)
    dates = _date_range(start, end)
    sold_total, avail_total, hold_total = (sum(t[i] for t in totals.values()) for i in range(3))
    summary = (
        f"{_pct(_ratio(sold_total, avail_total))} occupancy over {_day(start)} – {_day(end)}: "
        f"{_num(sold_total)} of {_num(avail_total)} nights sold, "
        f"{_num(hold_total)} owner/hold nights."
    )
    chart = _heatmap(
        "occ",
        title="Occupancy by night and accommodation type",
        desc=summary,
        dates=dates,
        rows=list(cells.items()),
        today=ctx.today,
    )
    table = _table(
        [
            "Accommodation type",
            "Nights sold",
            "Nights available",
            "Owner/hold nights",
            "Occupancy",
            "Available occupancy",
        ],
        (
            [label, _num(s), _num(a), _num(h), _pct(_ratio(s, a)), _pct(_ratio(s, a - h))]
            for label, (s, a, h) in totals.items()
        ),
        caption=f"Per accommodation type, {_day(start)} – {_day(end)}",
    )
    return f'<p class="summary">{_e(summary)}</p><div class="scroll">{chart}</div>{table}'


def _revenue(ctx: _Ctx) -> str:
    mart = ctx.mart("revenue_daily")
    if mart is None:
        return _empty("marts.revenue_daily is empty.")
    d, cur = mart.q(*DATE), mart.q(*CURRENCY)
    room, total = mart.q("room_revenue_net"), mart.q("total_revenue_net")
    sold, avail = mart.q("nights_sold"), mart.q("nights_available")
    window = ctx.window(mart, d)
    assert window is not None
    start, end = window
    found = ctx.rows(
        f"select {cur}, {d}, sum({room}), sum({sold}), sum({avail}), sum({total}) from"
        f" {mart.ref} where {d} between ? and ? group by all order by 1, 2",
        [start, end],
    )
    per_currency: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for row in found:
        per_currency[str(row[0])].append(row[1:])
    dates = _date_range(start, end)
    parts = []
    for i, (currency, rows) in enumerate(sorted(per_currency.items())):
        adr = {_as_date(r[0]): _f(_ratio(r[1], r[2])) for r in rows}
        revpar = {_as_date(r[0]): _f(_ratio(r[1], r[3])) for r in rows}
        trevpar = {_as_date(r[0]): _f(_ratio(r[4], r[3])) for r in rows}
        parts.append(
            f"<h3>{_e(currency)}</h3>"
            + _line_chart(
                f"rev{i}",
                title=f"ADR, RevPAR and TRevPAR per night in {currency}, excl. VAT",
                desc=f"Daily ADR (room revenue / nights sold), RevPAR (room revenue / nights "
                f"available) and TRevPAR in {currency} excluding VAT, {_day(start)} – "
                f"{_day(end)}; nights from today on are on the books.",
                dates=dates,
                series=[
                    _Series("ADR", adr, PALETTE[0]),
                    _Series("RevPAR", revpar, PALETTE[1]),
                    _Series("TRevPAR", trevpar, PALETTE[2], dashed=True),
                ],
                y_label=f"{currency} per night",
                fmt=lambda v, c=currency: _money(v, c),
                today=ctx.today,
            )
        )
    return "".join(parts) or _empty("no revenue in the period shown.")
