"""Sections on how guests book: pace against last year, channel mix, cancellations."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from decimal import Decimal

from pipelines.dashboard.charts import _bar_chart, _line_chart, _Series, _share_bars
from pipelines.dashboard.constants import (
    FUTURE_DAYS,
    MONTHS_SHOWN,
    PACE_HORIZONS,
    PALETTE,
    PICKUP_DAYS,
)
from pipelines.dashboard.formatting import (
    _as_date,
    _date_range,
    _day,
    _dec,
    _f,
    _money,
    _month,
    _num,
    _pct,
    _ratio,
    _signed_pct,
)
from pipelines.dashboard.markup import _empty, _table
from pipelines.dashboard.marts import AS_OF, CHANNEL, CURRENCY, DATE, MONTH, _Ctx


def _pace(ctx: _Ctx) -> str:
    mart = ctx.mart("booking_pace")
    if mart is None:
        return _empty("marts.booking_pace is empty.")
    d, as_of, cur = mart.q(*DATE), mart.q(*AS_OF), mart.q(*CURRENCY)
    otb_n, otb_r = mart.q("otb_nights"), mart.q("otb_room_revenue")
    stly_n, stly_r = mart.q("stly_otb_nights"), mart.q("stly_otb_room_revenue")
    pickup = mart.q("pickup_nights")
    (latest,) = ctx.rows(f"select max({as_of}) from {mart.ref} where {as_of} <= ?", [ctx.today])[0]
    if latest is None:
        (latest,) = ctx.rows(f"select max({as_of}) from {mart.ref}")[0]
    latest = _as_date(latest)
    end = latest + timedelta(max(PACE_HORIZONS) - 1)
    # one stay night has one currency, so nights add up across the currency rows
    found = ctx.rows(
        f"select {d}, sum({otb_n}), sum({stly_n}), sum({pickup}) from {mart.ref} "
        f"where {as_of} = ? and {d} between ? and ? group by 1 order by 1",
        [latest, latest, end],
    )
    if not found:
        return _empty(f"no stay nights after the snapshot of {_day(latest)}.")
    last_night = _as_date(found[-1][0])
    dates = _date_range(latest, last_night)
    otb = {_as_date(r[0]): _f(r[1]) for r in found}
    stly = {_as_date(r[0]): _f(r[2]) for r in found}
    picked = {_as_date(r[0]): _f(r[3]) for r in found}
    chart = _line_chart(
        "pace",
        title="Nights on the books vs same time last year",
        desc=f"Nights on the books as of {_day(latest)} per stay night for the next "
        f"{max(PACE_HORIZONS)} days, against the nights on the books for the stay night 364 "
        "days earlier at the same number of days before arrival.",
        dates=dates,
        series=[
            _Series(f"On the books as of {latest:%d %b %Y}", otb, PALETTE[0]),
            _Series("Same time last year", stly, PALETTE[8], dashed=True),
        ],
        y_label="Nights",
        fmt=lambda v: _num(v),
        x_label="Stay night",
    )
    rows = []
    for horizon in PACE_HORIZONS:
        h_end = latest + timedelta(horizon - 1)
        now = sum(v or 0 for k, v in otb.items() if k <= h_end)
        last = sum(v or 0 for k, v in stly.items() if k <= h_end)
        pick = sum(v or 0 for k, v in picked.items() if k <= h_end)
        rows.append(
            [
                f"Next {horizon} days",
                _num(now),
                _num(last),
                _signed_pct(_ratio(now - last, last)),
                _num(pick),
            ]
        )
    nights = _table(
        [
            "Stay nights",
            "Nights on the books",
            "Same time last year",
            "Change",
            f"Pickup, last {PICKUP_DAYS} days",
        ],
        rows,
        caption=f"Nights, snapshot of {_day(latest)}",
    )
    money_rows = []
    for horizon in PACE_HORIZONS:
        h_end = latest + timedelta(horizon - 1)
        for currency, now_r, last_r in ctx.rows(
            f"select {cur}, sum({otb_r}), sum({stly_r}) from {mart.ref} "
            f"where {as_of} = ? and {d} between ? and ? group by 1 order by 1",
            [latest, latest, h_end],
        ):
            c = str(currency)
            money_rows.append(
                [
                    f"Next {horizon} days",
                    c,
                    _money(now_r, c),
                    _money(last_r, c),
                    _signed_pct(_ratio((_dec(now_r) or 0) - (_dec(last_r) or 0), last_r)),
                ]
            )
    money = _table(
        ["Stay nights", "Currency", "Room revenue on the books", "Same time last year", "Change"],
        money_rows,
        caption="Room revenue on the books (incl. VAT, as billed), per currency",
        numeric_from=2,
    )
    return f'<div class="scroll">{chart}</div><div class="two">{nights}{money}</div>'


def _channel_mix(ctx: _Ctx) -> str:
    mart = ctx.mart("channel_mix_monthly")
    if mart is None:
        return _empty("marts.channel_mix_monthly is empty.")
    m, ch, cur = mart.q(*MONTH), mart.q(*CHANNEL), mart.q(*CURRENCY)
    sold, room = mart.q("nights_sold"), mart.q("room_revenue_net")
    months = [
        _as_date(r[0])
        for r in ctx.rows(
            f"select distinct {m} from {mart.ref} where {m} <= ? order by 1 desc limit ?",
            [ctx.today + timedelta(FUTURE_DAYS), MONTHS_SHOWN],
        )
    ][::-1]
    if not months:
        return _empty("no months in marts.channel_mix_monthly.")
    found = ctx.rows(
        f"select {m}, {ch}, {cur}, sum({sold}), sum({room}) from {mart.ref} "
        f"where {m} between ? and ? group by all order by 1, 2, 3",
        [months[0], months[-1]],
    )
    nights: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    channels: dict[str, float] = defaultdict(float)
    for month, channel, _c, month_nights, _r in found:
        nights[_month(_as_date(month))][str(channel)] += float(month_nights or 0)
        channels[str(channel)] += float(month_nights or 0)
    keys = sorted(channels, key=lambda k: -channels[k])
    colours = {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(keys)}
    chart = _share_bars(
        "mix",
        title="Share of nights sold per distribution channel, by stay month",
        desc=f"Share of nights sold per channel for each stay month {_month(months[0])} – "
        f"{_month(months[-1])}.",
        rows=[(_month(mo), dict(nights[_month(mo)])) for mo in months],
        keys=keys,
        colours=colours,
        detail=lambda label, key: f"{nights[label].get(key, 0):,.0f} nights",
    )
    sums = ctx.rows(
        f"select {ch}, {cur}, sum({sold}), sum({room}) from {mart.ref} "
        f"where {m} between ? and ? group by all order by 2, 4 desc",
        [months[0], months[-1]],
    )
    total_nights = sum(float(r[2] or 0) for r in sums)
    revenue_per_currency: dict[str, Decimal] = defaultdict(Decimal)
    for _ch, c, _n, r in sums:
        revenue_per_currency[str(c)] += _dec(r) or Decimal(0)
    table = _table(
        [
            "Channel",
            "Currency",
            "Nights sold",
            "Share of nights",
            "Room revenue excl. VAT",
            "Share of revenue (in currency)",
            "ADR excl. VAT",
        ],
        (
            [
                channel,
                c,
                _num(n),
                _pct(_ratio(n, total_nights)),
                _money(r, str(c)),
                _pct(_ratio(r, revenue_per_currency[str(c)])),
                _money(_ratio(r, n), str(c)),
            ]
            for channel, c, n, r in sums
        ),
        caption=f"Stay months {_month(months[0])} – {_month(months[-1])}",
        numeric_from=2,
    )
    return f'<div class="scroll">{chart}</div>{table}'


def _cancellations(ctx: _Ctx) -> str:
    mart = ctx.mart("cancellations_monthly")
    if mart is None:
        return _empty("marts.cancellations_monthly is empty.")
    m = mart.q(*MONTH)
    created, cancelled = mart.q("reservations_created"), mart.q("reservations_cancelled")
    declined, expired = mart.q("reservations_declined"), mart.q("reservations_expired")
    booked, lead = mart.q("reservations_on_the_books"), mart.q("avg_lead_time_days")
    arrivals, stay_nights = mart.q("arrivals"), mart.q("arrival_stay_nights")
    # rows are per month x location: lead time is re-weighted by the bookings it averages
    found = ctx.rows(
        f"select {m}, sum({created}), sum({cancelled}), sum({declined}), sum({expired}), "
        f"sum({lead} * {booked}) / nullif(sum(case when {lead} is not null then {booked} end), 0), "
        f"sum({stay_nights}), sum({arrivals}) "
        f"from {mart.ref} where {m} <= ? group by 1 having sum({created}) > 0 "
        "order by 1 desc limit ?",
        [ctx.today, MONTHS_SHOWN],
    )[::-1]
    if not found:
        return _empty(f"no reservations created up to {_day(ctx.today)}.")
    labels = [_month(_as_date(r[0])) for r in found]
    names = ("Created", "Cancelled", "Declined", "Expired")
    colours = (PALETTE[0], PALETTE[3], PALETTE[1], PALETTE[8])
    series = [
        _Series(name, {labels[k]: _f(r[i + 1]) for k, r in enumerate(found)}, colour)
        for i, (name, colour) in enumerate(zip(names, colours, strict=True))
    ]
    chart = _bar_chart(
        "canc",
        title="Reservations created, cancelled, declined and expired per month",
        desc=f"Guest reservations by the month they were created, {labels[0]} – {labels[-1]}; "
        "cancelled, declined and expired count the ones created that month that ended so.",
        categories=labels,
        series=series,
        y_label="Reservations",
        x_label="Month created",
        fmt=lambda v: _num(v),
    )
    table = _table(
        [
            "Month",
            "Created",
            "Cancelled",
            "Cancellation rate",
            "Declined",
            "Expired",
            "Avg lead time (days)",
            "ALOS (nights, by arrival month)",
        ],
        (
            [
                label,
                _num(r[1]),
                _num(r[2]),
                _pct(_ratio(r[2], r[1])),
                _num(r[3]),
                _num(r[4]),
                _num(r[5], 1),
                _num(_ratio(r[6], r[7]), 2),
            ]
            for label, r in zip(labels, found, strict=True)
        ),
        caption="Cancellation rate = cancelled / created (declines and expiries beside it); "
        "lead time over on-the-books bookings",
    )
    return f'<div class="scroll">{chart}</div>{table}'
