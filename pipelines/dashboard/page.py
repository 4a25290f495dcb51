"""The page: header, filters, headline tiles and the sections, as HTML around plotly charts.

One renderer for both readers: `reservoir serve` (filters as a GET form, plotly.js and the
page script from /static) and the offline snapshot of `reservoir dashboard` (the same page with
both scripts inlined and the filters as text). Money in tiles and tables is the exact decimal
of the feed; charts get numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlencode

from pipelines.dashboard import area_commercial, area_supply, figures
from pipelines.dashboard.areas import AreaData
from pipelines.dashboard.formatting import _day, _e, _money, _month, _num, _pct
from pipelines.dashboard.style import CSS
from pipelines.dashboard.tables import table, tiles
from pipelines.dashboard.views import PageData, month_end

Mode = Literal["app", "snapshot"]


class _Charts:
    """Collects the figures of one page and writes each as a JSON script beside its div."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, figure: dict[str, Any], label: str) -> str:
        self.count += 1
        key = f"fig{self.count}"
        # the title goes above the chart as HTML, so that it wraps on a phone
        title = figure["layout"].pop("title", {}).get("text", "")
        spec = json.dumps(figure, default=str).replace("</", "<\\/")
        return (
            f'<h3 class="chart-title">{_e(title)}</h3>'
            f'<div class="chart" role="img" aria-label="{_e(label)}" data-figure="{key}"></div>'
            f'<script type="application/json" id="{key}">{spec}</script>'
        )


def _filters_form(data: PageData) -> str:
    f, o = data.filters, data.options

    def select(name: str, label: str, options: dict[Any, str], chosen: Sequence[Any]) -> str:
        items = "".join(
            f'<option value="{_e(k)}"{" selected" if k in chosen else ""}>{_e(v)}</option>'
            for k, v in sorted(options.items(), key=lambda kv: kv[1])
        )
        return (
            f'<label class="field"><span>{_e(label)}</span>'
            f'<select name="{name}" multiple size="3">{items}</select></label>'
        )

    currencies = '<option value="">All currencies</option>' + "".join(
        f"<option{' selected' if c == f.currency else ''}>{_e(c)}</option>" for c in o.currencies
    )
    return (
        '<form class="filters" method="get" action="/" aria-label="Filters">'
        + select("park", "Park", o.parks, f.parks)
        + select("accommodation_type", "Accommodation type", o.types, f.types)
        + select("channel", "Channel", o.channels, f.channels)
        + f'<label class="field"><span>Currency</span><select name="currency">{currencies}'
        "</select></label>"
        f'<label class="field"><span>From</span><input type="date" name="from" '
        f'value="{f.start.isoformat()}"></label>'
        f'<label class="field"><span>To</span><input type="date" name="to" '
        f'value="{f.end.isoformat()}"></label>'
        '<div class="actions"><button type="submit">Apply</button>'
        '<a href="/">Reset</a></div></form>'
    )


def _filters_text(data: PageData) -> str:
    f, o = data.filters, data.options
    parts = [f"{f.start:%d %b %Y} – {f.end:%d %b %Y}"]
    for label, ids, names in (
        ("parks", f.parks, o.parks),
        ("types", f.types, o.types),
        ("channels", f.channels, o.channels),
    ):
        parts.append(f"{label}: " + (", ".join(names.get(i, str(i)) for i in ids) or "all"))
    parts.append(f"currency: {f.currency or 'all'}")
    return f'<p class="filter-text">{_e(" · ".join(parts))}</p>'


def _section(key: str, title: str, intro: str, body: str) -> str:
    return (
        f'<section id="{key}" aria-labelledby="{key}-h"><h2 id="{key}-h">{_e(title)}</h2>'
        f'<p class="intro">{_e(intro)}</p>{body}</section>'
    )


def _month_links(data: PageData, mode: Mode) -> dict[str, str]:
    if mode != "app":
        return {}
    f = data.filters
    return {
        m.isoformat()[:7]: "/?" + urlencode(f.query(month=m)) + "#nights"
        for m in (row[0] for row in data.monthly["occupancy"].rows)
    }


def _months(data: PageData, charts: _Charts, mode: Mode) -> str:
    links = _month_links(data, mode)
    occ, rev = data.monthly["occupancy"], data.monthly["room_revenue_net"]
    body = charts(
        figures.occupancy_months(occ, data.monthly_ly["occupancy"], links),
        "Occupancy by month against last year",
    ) + charts(
        figures.money_months(
            rev, data.monthly_ly["room_revenue_net"], "Room revenue excl. VAT by month", links
        ),
        "Room revenue by month against last year",
    )
    money = {
        name: {(r[0], r[1]): r[-1] for r in data.monthly[name].rows}
        for name in ("room_revenue_net", "adr_net", "revpar_net")
    }
    currencies = sorted({c for (_m, c) in money["room_revenue_net"]})
    rows = []
    for month, *_x, occupancy in occ.rows:
        label = _e(_month(month))
        if month.isoformat()[:7] in links:
            label = f'<a href="{_e(links[month.isoformat()[:7]])}">{label}</a>'
        cells = [label, _e(_pct(occupancy))]
        for c in currencies:
            cells += [_e(_money(money[n].get((month, c)), c)) for n in money]
        rows.append(cells)
    heads = ["Month", "Occupancy"]
    for c in currencies:
        heads += [f"Revenue {c}", f"ADR {c}", f"RevPAR {c}"]
    body += table(
        heads,
        rows,
        caption="Per month, excl. VAT" + (" (pick a month for its nights)" if links else ""),
        raw=True,
    )
    return body


def _nights(data: PageData, charts: _Charts) -> str:
    f = data.filters
    assert f.month is not None
    occ, adr = data.nightly["occupancy"], data.nightly["adr_net"]
    body = charts(
        figures.nights(occ, data.nightly_ly["occupancy"], adr), "Occupancy and ADR by night"
    )
    adr_by = {(r[0], r[1]): r for r in adr.rows}
    rows = []
    for night, sold, available, value in occ.rows:
        money = [
            f"{_money(r[-1], r[1])}" for (d, _c), r in sorted(adr_by.items()) if d == night and r[3]
        ]
        rows.append(
            [f"{night:%a %d %b}", _num(sold), _num(available), _pct(value), " · ".join(money)]
        )
    body += table(
        ["Night", "Sold", "Available", "Occupancy", "ADR excl. VAT"],
        rows,
        caption=f"Nights of {_month(f.month)}",
    )
    back = "/?" + urlencode(f.query(month=None))
    return body + f'<p><a href="{_e(back)}">Back to months</a></p>'


def _pace(data: PageData, charts: _Charts) -> str:
    p = data.pace
    body = charts(
        figures.pace(p["otb_occupancy"], p["stly_occupancy"], p["forecast_occupancy"]),
        "Occupancy on the books, last year and forecast by stay month",
    )
    stly = {r[0]: r[-1] for r in p["stly_occupancy"].rows}
    fc = {r[0]: r[-1] for r in p["forecast_occupancy"].rows}
    money = {
        name: {(r[0], r[1]): r[-1] for r in p[name].rows}
        for name in ("otb_room_revenue", "stly_otb_room_revenue", "forecast_room_revenue")
    }
    currencies = sorted({c for (_m, c) in money["otb_room_revenue"]})
    rows = []
    for month, *_x, value in p["otb_occupancy"].rows:
        cells = [_month(month), _pct(value), _pct(stly.get(month)), _pct(fc.get(month))]
        for c in currencies:
            cells += [
                _money(money["otb_room_revenue"].get((month, c)), c),
                _money(money["stly_otb_room_revenue"].get((month, c)), c),
                _money(money["forecast_room_revenue"].get((month, c)), c),
            ]
        rows.append(cells)
    heads = ["Stay month", "OTB occ.", "STLY occ.", "Forecast occ."]
    for c in currencies:
        heads += [f"OTB {c}", f"STLY {c}", f"Forecast {c}"]
    return body + table(heads, rows, caption="Room revenue incl. VAT, as billed", wide=True)


def _channels(data: PageData, charts: _Charts) -> str:
    c = data.channels
    names = data.options.channels
    body = charts(
        figures.categories(
            c["nights_sold"], c["adr_net"], names, "Nights sold and ADR by channel", "Nights sold"
        ),
        "Nights sold and ADR by channel",
    )
    revenue = {(r[0], r[1]): r for r in c["room_revenue_net"].rows}
    adr = {(r[0], r[1]): r[-1] for r in c["adr_net"].rows}
    share = {(r[0], r[1]): r for r in c["commission_share"].rows}
    rows = []
    for (channel, currency), r in sorted(revenue.items(), key=lambda kv: str(kv[0])):
        if not r[-1]:
            continue
        commission = share.get((channel, currency))
        rows.append(
            [
                names.get(channel, str(channel)),
                currency,
                _money(r[-1], currency),
                _money(adr.get((channel, currency)), currency),
                _money(commission[2] if commission else None, currency),
                _pct(commission[-1] if commission else None),
            ]
        )
    return body + table(
        ["Channel", "Cur.", "Room revenue", "ADR", "Commission", "Comm. share"],
        rows,
        caption="Excl. VAT",
    )


def _bookings(data: PageData, charts: _Charts) -> str:
    b = data.bookings
    body = charts(
        figures.cancellations(b["cancellation_rate"], data.bookings_ly["cancellation_rate"]),
        "Cancellation rate by booking month against last year",
    )
    alos = {r[0]: r for r in b["alos"].rows}
    rows = []
    for month, cancelled, created, rate in b["cancellation_rate"].rows:
        a = alos.get(month)
        rows.append(
            [
                _month(month),
                _num(created),
                _num(cancelled),
                _pct(rate),
                _num(a[2] if a else None),
                _num(a[-1] if a else None, 1),
            ]
        )
    return body + table(
        ["Month", "Booked", "Cancelled", "Cancel. rate", "Arrivals", "ALOS"],
        rows,
        caption="Booked and cancelled by booking month; arrivals and length of stay by arrival "
        "month",
    )


def _weekdays(data: PageData, charts: _Charts) -> str:
    w = data.weekdays
    return charts(
        figures.categories(
            w["occupancy"],
            w["adr_net"],
            figures.weekday_labels(),
            "Occupancy and ADR by day of the week",
            "Occupancy",
        ),
        "Occupancy and ADR by day of the week",
    )


def _windows(data: PageData, charts: _Charts) -> str:
    w = data.windows
    return charts(
        figures.categories(
            w["nights_sold"],
            w["adr_net"],
            {},
            "Nights sold and ADR by booking window",
            "Nights sold",
        ),
        "Nights sold and ADR by booking window",
    )


def render(
    data: PageData,
    *,
    mode: Mode,
    source: str,
    as_of_note: str = "",
    scripts: str = "",
    areas: AreaData | None = None,
) -> str:
    """The page as one string; `scripts` is plotly.js and the page script (tags); `areas` adds
    the supply and commercial area sections."""
    f = data.filters
    charts = _Charts()
    sections = [
        _section("months", "Months against last year", _MONTHS_INTRO, _months(data, charts, mode))
    ]
    if f.month is not None:
        title = f"Nights of {_month(f.month)}"
        sections.append(_section("nights", title, _NIGHTS_INTRO, _nights(data, charts)))
    sections += [
        _section("pace", "Pace and forecast", _PACE_INTRO, _pace(data, charts)),
        _section(
            "channels",
            "Channels: revenue, net ADR and commission",
            _SPLIT_INTRO,
            _channels(data, charts),
        ),
        _section(
            "bookings", "Bookings and cancellations", _BOOKINGS_INTRO, _bookings(data, charts)
        ),
        _section("weekdays", "Day of the week", _SPLIT_INTRO, _weekdays(data, charts)),
        _section("windows", "Booking window", _WINDOW_INTRO, _windows(data, charts)),
    ]
    links = [
        ("kpis", "Headline"),
        ("months", "Months"),
        ("pace", "Pace"),
        ("channels", "Channels"),
        ("bookings", "Cancellations"),
        ("weekdays", "Weekdays"),
        ("windows", "Window"),
    ]
    if areas is not None:
        o = data.options
        for key, title, intro, body in (
            area_supply.supply(areas, f, charts),
            area_supply.orphans(areas, f, o, charts),
            area_supply.allotments(areas, f, o, charts),
            area_commercial.owners(areas, f, charts),
            area_commercial.ancillary(areas, f, charts),
            area_commercial.channel_net(areas, f, o, charts),
            area_commercial.guest_mix(areas, f, charts),
        ):
            sections.append(_section(key, title, intro, body))
            links.append((key, title))
    nav = "".join(f'<a href="#{k}">{_e(t)}</a>' for k, t in links)
    filters = _filters_form(data) if mode == "app" else _filters_text(data)
    csp = (
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' "
        "'unsafe-inline'; img-src 'self' data: blob:; font-src data:; form-action 'self'"
    )
    period = f"{f.start:%d %b %Y} – {min(f.end, month_end(f.end)):%d %b %Y}"
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>Reservoir dashboard · {_e(f.today.isoformat())}</title>"
        f"<style>{CSS}</style></head><body>"
        "<header><h1>Revenue and occupancy</h1>"
        f'<p>As of <time datetime="{f.today.isoformat()}">{_e(_day(f.today))}</time>'
        f"{_e(as_of_note)} · from {_e(source)}</p>"
        f'<nav aria-label="Sections">{nav}</nav>{filters}</header>'
        f'<main><section id="kpis" aria-labelledby="kpis-h"><h2 id="kpis-h">Headline figures, '
        f'{_e(period)}</h2><p class="intro">{_e(_TILES_INTRO)}</p>{tiles(data)}</section>'
        f"{''.join(sections)}</main>"
        f"<footer>{_e(_FOOTER)}</footer>{scripts}</body></html>\n"
    )


_TILES_INTRO = (
    "Over the range picked, against the same dates last year. Occupancy = nights sold / nights "
    "available; ADR = room revenue / nights sold; RevPAR = room revenue / nights available; net "
    "ADR = (room revenue - commission) / nights sold; all excl. VAT, money per currency. Nights "
    "available do not split by channel: with a channel picked, occupancy and RevPAR are that "
    "channel's share."
)
_MONTHS_INTRO = (
    "Stay months of the range, against the same months a year earlier. Nights from today on "
    "are on the books."
)
_NIGHTS_INTRO = "Each night of the month, against the same weekday last year (364 days before)."
_PACE_INTRO = (
    "The next 12 stay months: on the books now, on the books the same days before arrival last "
    "year, and the pickup forecast (docs/forecast.md). Pace has no park, type or channel split; "
    "only the currency filter applies."
)
_SPLIT_INTRO = "Over the range picked, excl. VAT."
_BOOKINGS_INTRO = (
    "Reservations by the month they were made, against a year earlier. Only the park and "
    "currency filters apply (the mart has no type or channel split)."
)
_WINDOW_INTRO = "Nights sold by days from reservation to arrival, with their ADR excl. VAT."
_FOOTER = (
    "The sales, pace, supply and orphan figures are metrics of the feed (GET /api/metrics); the "
    "allotment, owner, add-on, channel net revenue and guest-mix sections sum their marts. "
    "Ratios are recomputed from sums, never averaged; money is never added across currencies."
)
