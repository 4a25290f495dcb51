"""The charts, as plotly.js figure specifications (data + layout) built from the feed's answers.

plotly.js draws them in the browser, the same specs in `reservoir serve` and in the offline
snapshot. Values go in as numbers (the tables beside the charts carry the exact money); a
figure's `meta.links` lets a click on a month drill into its nights.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

from pipelines.dashboard.constants import PALETTE
from warehouse.semantic_query import Answer

Figure = dict[str, Any]
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
LY_COLOUR = "#94a3b8"
# money on a second axis at the right; automargin keeps its tick labels inside the chart
_RIGHT_AXIS = {
    "overlaying": "y",
    "side": "right",
    "tickformat": ",.0f",
    "showgrid": False,
    "automargin": True,
    "rangemode": "tozero",
}


def _layout(title: str, *, y: str = "", percent: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {"size": 14}, "x": 0, "xanchor": "left"},
        "margin": {"l": 48, "r": 12, "t": 12, "b": 40},
        "height": 320,
        "autosize": True,
        "legend": {"orientation": "h", "y": -0.18, "x": 0},
        "yaxis": {
            "title": {"text": y},
            "tickformat": ".0%" if percent else ",",
            "rangemode": "tozero",
            "automargin": True,
        },
        "xaxis": {"automargin": True},
        "hovermode": "x unified",
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        **extra,
    }


def _value(answer: Answer, row: tuple[Any, ...]) -> float | None:
    v = row[len(answer.columns) - 1]
    return None if v is None else float(v)


def _by_currency(answer: Answer) -> dict[str, dict[Any, float | None]]:
    """{currency: {key: value}} for an answer keyed by (key, currency)."""
    out: dict[str, dict[Any, float | None]] = defaultdict(dict)
    for row in answer.rows:
        out[str(row[1])][row[0]] = _value(answer, row)
    return dict(out)


def _single(answer: Answer) -> dict[Any, float | None]:
    return {row[0]: _value(answer, row) for row in answer.rows}


def shift_year(key: Any) -> Any:
    """A month key of last year moved onto this year's axis."""
    return key.replace(year=key.year + 1)


def _last_year_line(
    name: str, keys: list[Any], values: list[Any], colour: str, hover: str, mode: str
) -> dict[str, Any]:
    """The dotted comparison line of last year's figures on this year's axis."""
    return {
        "type": "scatter",
        "mode": mode,
        "name": name,
        "x": [k.isoformat() for k in keys],
        "y": values,
        "line": {"color": colour, "dash": "dot"},
        "hovertemplate": hover,
    }


def _months_against_last_year(now: Answer, ly: Answer, this_year: Figure, title: str) -> Figure:
    """A rate by month: this year's trace (`this_year`: a bar's or a line's style) against last
    year's dotted line, the months of last year moved onto this year's."""
    this, last = _single(now), {shift_year(k): v for k, v in _single(ly).items()}
    months = sorted(this)
    x = [m.isoformat() for m in months]
    y = [this[m] for m in months]
    return {
        "data": [
            {**this_year, "name": "This year", "x": x, "y": y, "hovertemplate": "%{y:.1%}"},
            _last_year_line(
                "Last year",
                months,
                [last.get(m) for m in months],
                LY_COLOUR,
                "%{y:.1%}",
                "lines+markers",
            ),
        ],
        "layout": _layout(title, percent=True, xaxis={"type": "date"}),
    }


def occupancy_months(now: Answer, ly: Answer, links: dict[str, str]) -> Figure:
    bars = {"type": "bar", "marker": {"color": PALETTE[0]}}
    title = "Occupancy by month, against last year"
    return {**_months_against_last_year(now, ly, bars, title), "meta": {"links": links}}


def money_months(now: Answer, ly: Answer, title: str, links: dict[str, str]) -> Figure:
    data: list[dict[str, Any]] = []
    last = _by_currency(ly)
    for i, (currency, values) in enumerate(sorted(_by_currency(now).items())):
        months = sorted(values)
        previous = {shift_year(k): v for k, v in last.get(currency, {}).items()}
        colour = PALETTE[i % len(PALETTE)]
        data.append(
            {
                "type": "bar",
                "name": f"{currency} this year",
                "x": [m.isoformat() for m in months],
                "y": [values[m] for m in months],
                "marker": {"color": colour},
                "hovertemplate": f"{currency} %{{y:,.2f}}",
            }
        )
        data.append(
            _last_year_line(
                f"{currency} last year",
                months,
                [previous.get(m) for m in months],
                colour,
                f"{currency} %{{y:,.2f}}",
                "lines+markers",
            )
        )
    return {
        "data": data,
        "layout": _layout(title, xaxis={"type": "date"}, barmode="group"),
        "meta": {"links": links},
    }


def nights(occupancy: Answer, occupancy_ly: Answer, adr: Answer) -> Figure:
    this = _single(occupancy)
    ly = _single(occupancy_ly)
    days = sorted(this)
    data: list[dict[str, Any]] = [
        {
            "type": "bar",
            "name": "Occupancy",
            "x": [d.isoformat() for d in days],
            "y": [this[d] for d in days],
            "marker": {"color": PALETTE[0]},
            "hovertemplate": "%{y:.1%}",
        },
        _last_year_line(
            "Occupancy, same weekday last year",
            days,
            [ly.get(_minus(d)) for d in days],
            LY_COLOUR,
            "%{y:.1%}",
            "lines",
        ),
    ]
    for i, (currency, values) in enumerate(sorted(_by_currency(adr).items())):
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"ADR {currency}",
                "x": [d.isoformat() for d in days],
                "y": [values.get(d) for d in days],
                "yaxis": "y2",
                "line": {"color": PALETTE[(i + 1) % len(PALETTE)]},
                "hovertemplate": f"{currency} %{{y:,.2f}}",
            }
        )
    return {
        "data": data,
        "layout": _layout(
            "Occupancy and ADR excl. VAT by night",
            percent=True,
            xaxis={"type": "date"},
            yaxis2=_RIGHT_AXIS,
        ),
    }


def _minus(d: Any) -> Any:
    """The same weekday last year (booking_pace's STLY rule)."""
    return d - timedelta(364)


def cancellations(now: Answer, ly: Answer) -> Figure:
    line = {"type": "scatter", "mode": "lines+markers", "line": {"color": PALETTE[3]}}
    title = "Cancellation rate by booking month, against last year"
    return _months_against_last_year(now, ly, line, title)


def pace(otb: Answer, stly: Answer, forecast: Answer) -> Figure:
    series = (
        ("On the books now", otb, PALETTE[0], "bar"),
        ("Same time last year", stly, LY_COLOUR, "bar"),
        ("Forecast", forecast, PALETTE[1], "scatter"),
    )
    data = []
    for name, answer, colour, kind in series:
        values = _single(answer)
        months = sorted(values)
        trace: dict[str, Any] = {
            "type": kind,
            "name": name,
            "x": [m.isoformat() for m in months],
            "y": [values[m] for m in months],
            "marker": {"color": colour},
            "hovertemplate": "%{y:.1%}",
        }
        if kind == "scatter":
            trace["mode"] = "lines+markers"
        data.append(trace)
    return {
        "data": data,
        "layout": _layout(
            "Occupancy on the books by stay month: now, last year, forecast",
            percent=True,
            barmode="group",
            xaxis={"type": "date"},
        ),
    }


def categories(
    counts: Answer, money: Answer, labels: dict[Any, str], title: str, count_label: str
) -> Figure:
    """Bars of a count per category with a per-currency money line on a second axis."""
    keys = [row[0] for row in counts.rows]
    names = [labels.get(k, str(k)) for k in keys]
    data: list[dict[str, Any]] = [
        {
            "type": "bar",
            "name": count_label,
            "x": names,
            "y": [_value(counts, r) for r in counts.rows],
            "marker": {"color": PALETTE[0]},
        }
    ]
    for i, (currency, values) in enumerate(sorted(_by_currency(money).items())):
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "marker": {"size": 10, "symbol": "diamond"},
                "name": f"ADR {currency}",
                "x": names,
                "y": [values.get(k) for k in keys],
                "yaxis": "y2",
                "line": {"color": PALETTE[(i + 1) % len(PALETTE)]},
                "hovertemplate": f"{currency} %{{y:,.2f}}",
            }
        )
    percent = counts.metric.kind == "ratio"
    return {
        "data": data,
        "layout": _layout(
            title,
            percent=percent,
            hovermode="closest",
            yaxis2=_RIGHT_AXIS,
        ),
    }


def weekday_labels() -> dict[Any, str]:
    return {i + 1: name for i, name in enumerate(WEEKDAYS)}
