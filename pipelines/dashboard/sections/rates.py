"""The section comparing published list prices with the prices actually realised."""

from __future__ import annotations

from datetime import timedelta

from pipelines.dashboard.charts import _line_chart, _Series
from pipelines.dashboard.constants import (
    CHART_WIDTH,
    KPI_DAYS,
    PALETTE,
    RATE_TYPES_CHARTED,
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
    _signed_pct,
)
from pipelines.dashboard.markup import _empty, _table
from pipelines.dashboard.marts import CURRENCY, DATE, _Ctx


def _rates(ctx: _Ctx) -> str:
    mart = ctx.mart("rate_availability_daily")
    if mart is None:
        return _empty("marts.rate_availability_daily is empty.")
    d, typ, cur = mart.q(*DATE), mart.q("accommodation_type_id"), mart.q(*CURRENCY)
    rate, price = mart.q("rate_type_id"), mart.q("list_price")
    sold, revenue = mart.q("nights_sold"), mart.q("room_revenue")
    remaining, avail = mart.q("remaining_units"), mart.q("nights_available")
    window = ctx.window(mart, d)
    assert window is not None
    start, end = window
    ahead = (ctx.today, ctx.today + timedelta(KPI_DAYS - 1))
    found = ctx.rows(
        f"select {typ}, {rate}, {cur}, sum({revenue}), sum({sold}), "
        f"sum({price} * {sold}) filter (where {price} is not null), "
        f"sum({sold}) filter (where {price} is not null), "
        f"avg({price}) filter (where {d} between ? and ?) "
        f"from {mart.ref} where {d} between ? and ? group by all "
        f"order by sum({sold}) desc, 3, 1, 2",
        [*ahead, start, end],
    )
    if not found:
        return _empty("no rates or sales in the period shown.")
    labels = ctx.labels()
    rows = []
    for type_id, rate_id, currency, rev, n, list_rev, list_n, ahead_price in found:
        c = str(currency)
        adr, listed = _ratio(rev, n), _ratio(list_rev, list_n)
        gap = None if adr is None or listed is None else _ratio(adr - listed, listed)
        rows.append(
            [
                labels.type(type_id),
                labels.rate_type(rate_id),
                c,
                _num(n),
                _money(listed, c),
                _money(adr, c),
                _signed_pct(gap),
                _money(ahead_price, c),
            ]
        )
    prices = _table(
        [
            "Accommodation type",
            "Rate type",
            "Currency",
            "Nights sold",
            "List price of nights sold",
            "Realised ADR",
            "Realised vs list",
            "Avg list price, next 30 days",
        ],
        rows,
        caption=f"{_day(start)} – {_day(end)}; list price averaged over the nights sold",
        numeric_from=3,
    )
    # remaining units repeat on every rate-type and currency row of a type and night
    left = ctx.rows(
        f"select {typ}, sum(r), sum(a) from (select {typ}, {d}, max({remaining}) as r, "
        f"max({avail}) as a from {mart.ref} where {d} between ? and ? group by all) "
        "group by 1 order by 1",
        list(ahead),
    )
    availability = _table(
        ["Accommodation type", "Unit-nights left to sell", "Nights available", "Share left"],
        ([labels.type(t), _num(r), _num(a), _pct(_ratio(r, a))] for t, r, a in left),
        caption=f"Availability left, {_day(ahead[0])} – {_day(ahead[1])}",
    )
    dates = _date_range(start, end)
    charts = []
    for i, (type_id, rate_id, currency, *_rest) in enumerate(found[:RATE_TYPES_CHARTED]):
        c, name = str(currency), f"{labels.type(type_id)} · {labels.rate_type(rate_id)}"
        daily = ctx.rows(
            f"select {d}, avg({price}), sum({revenue}), sum({sold}) from {mart.ref} "
            f"where {typ} is not distinct from ? and {rate} is not distinct from ? "
            f"and {cur} is not distinct from ? and {d} between ? and ? group by 1 order by 1",
            [type_id, rate_id, currency, start, end],
        )
        charts.append(
            f'<figure class="multiple"><figcaption>{_e(f"{name} ({c})")}</figcaption>'
            + _line_chart(
                f"rate{i}",
                title=f"List price vs realised ADR, {name}, {c}",
                desc=f"Nightly list price and realised ADR of {name} in {c}, both including "
                f"VAT, {_day(start)} – {_day(end)}.",
                dates=dates,
                series=[
                    _Series(
                        "List price",
                        {_as_date(r[0]): _f(r[1]) for r in daily},
                        PALETTE[8],
                        dashed=True,
                    ),
                    _Series(
                        "Realised ADR",
                        {_as_date(r[0]): _f(_ratio(r[2], r[3])) for r in daily},
                        PALETTE[2],
                    ),
                ],
                y_label=f"{c} per night",
                fmt=lambda v, c=c: _money(v, c),
                today=ctx.today,
                height=260,
                width=CHART_WIDTH // 2,
            )
            + "</figure>"
        )
    return f'{prices}{availability}<div class="multiples">{"".join(charts)}</div>'
