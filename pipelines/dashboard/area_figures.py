"""The area sections' charts, as plotly.js figure specifications (the same drawing as
`figures`): nights out of sale and sellable occupancy by month, orphan nights by night,
allotment pickup, owner share against the journal, add-ons, channel net revenue and guest mix.
Values go in as numbers; the tables beside them carry the exact money."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pipelines.dashboard.constants import PALETTE
from pipelines.dashboard.figures import _RIGHT_AXIS, LY_COLOUR, Figure, _layout, _single

Row = tuple[Any, ...]


def _num(v: Any) -> float | None:
    return None if v is None else float(v)


def _bar(name: str, x: list[Any], y: list[Any], colour: str, **extra: Any) -> dict[str, Any]:
    return {"type": "bar", "name": name, "x": x, "y": y, "marker": {"color": colour}, **extra}


def _across(title: str, n: int) -> dict[str, Any]:
    """Horizontal stacked bars, one row per category: long names stay readable on a phone."""
    return {
        **_layout(title, barmode="stack", hovermode="closest"),
        "height": 140 + 44 * max(n, 1),
        "yaxis": {"type": "category", "automargin": True, "autorange": "reversed"},
        "xaxis": {"tickformat": ",", "rangemode": "tozero", "automargin": True},
    }


def _hbar(name: str, y: list[Any], x: list[Any], colour: str, **extra: Any) -> dict[str, Any]:
    return {**_bar(name, x, y, colour, **extra), "orientation": "h"}


def supply_out_of_sale(counts: dict[str, Any]) -> Figure:
    """Stacked nights taken out of sale by month: out of order, owner-blocked, allotment-held."""
    series = (
        ("out_of_order_nights", "Out of order", PALETTE[3]),
        ("owner_hold_nights", "Owner-blocked", PALETTE[4]),
        ("allotment_held_nights", "Allotment-held", PALETTE[1]),
    )
    data = []
    for name, label, colour in series:
        values = _single(counts[name])
        months = sorted(values)
        data.append(
            _bar(label, [m.isoformat() for m in months], [values[m] for m in months], colour)
        )
    return {
        "data": data,
        "layout": _layout(
            "Nights out of sale by month", y="Nights", barmode="stack", xaxis={"type": "date"}
        ),
    }


def supply_occupancy(occupancy: Any, sellable: Any) -> Figure:
    data = []
    for answer, label, colour, dash in (
        (occupancy, "Occupancy (of nights available)", LY_COLOUR, "dot"),
        (sellable, "Sellable occupancy (of nights sellable)", PALETTE[0], "solid"),
    ):
        values = _single(answer)
        months = sorted(values)
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": label,
                "x": [m.isoformat() for m in months],
                "y": [values[m] for m in months],
                "line": {"color": colour, "dash": dash},
                "hovertemplate": "%{y:.1%}",
            }
        )
    return {
        "data": data,
        "layout": _layout(
            "Occupancy against sellable occupancy by month", percent=True, xaxis={"type": "date"}
        ),
    }


def orphans(unsold: Any, orphan: Any) -> Figure:
    u, o = _single(unsold), _single(orphan)
    days = sorted(u)
    x = [d.isoformat() for d in days]
    return {
        "data": [
            _bar("Orphan nights", x, [o.get(d) for d in days], PALETTE[3]),
            _bar(
                "Other unsold nights",
                x,
                [(u[d] or 0) - (o.get(d) or 0) for d in days],
                "#cbd5e1",
            ),
        ],
        "layout": _layout(
            "Unsold nights ahead: orphan and fillable",
            y="Nights",
            barmode="stack",
            xaxis={"type": "date"},
            bargap=0.05,
        ),
    }


def allotments(rows: list[Row], names: dict[Any, str]) -> Figure:
    """Per channel: picked up, released and still held, stacked to the nights held."""
    y = [names.get(r[0], str(r[0])) for r in rows]
    return {
        "data": [
            _hbar("Picked up", y, [_num(r[2]) for r in rows], PALETTE[2]),
            _hbar("Released", y, [_num(r[3]) for r in rows], LY_COLOUR),
            _hbar("Still held", y, [_num(r[4]) for r in rows], PALETTE[1]),
        ],
        "layout": _across(
            "Allotment nights held by channel: picked up, released, still held", len(rows)
        ),
    }


def owner_shares(rows: list[Row]) -> Figure:
    """By month and currency: the owner share the stays earn against the journal's bookings."""
    data: list[dict[str, Any]] = []
    by: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by[str(r[1])].append(r)
    for i, (currency, found) in enumerate(sorted(by.items())):
        colour = PALETTE[i % len(PALETTE)]
        x = [r[0].isoformat() for r in found]
        data.append(
            _bar(
                f"Owner share {currency}",
                x,
                [_num(r[5]) for r in found],
                colour,
                hovertemplate=f"{currency} %{{y:,.2f}}",
                offsetgroup=currency,
            )
        )
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "offsetgroup": currency,
                "name": f"Booked in the journal {currency}",
                "x": x,
                "y": [_num(r[6]) for r in found],
                "marker": {"size": 9, "symbol": "diamond", "color": "#111827"},
                "hovertemplate": f"{currency} %{{y:,.2f}}",
            }
        )
    return {
        "data": data,
        "layout": _layout(
            "Owner share by month against the owner journal",
            barmode="group",
            scattermode="group",
            xaxis={"type": "date"},
        ),
    }


def ancillary(rows: list[Row]) -> Figure:
    """Per add-on category: net revenue per currency, and the attach rate on a second axis."""
    categories = sorted({str(r[0]) for r in rows})
    data: list[dict[str, Any]] = []
    currencies = sorted({str(r[1]) for r in rows})
    for i, currency in enumerate(currencies):
        values = {str(r[0]): _num(r[3]) for r in rows if r[1] == currency}
        data.append(
            _bar(
                f"Revenue excl. VAT {currency}",
                categories,
                [values.get(c) for c in categories],
                PALETTE[i % len(PALETTE)],
                hovertemplate=f"{currency} %{{y:,.2f}}",
            )
        )
    stays: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        stays[str(r[0])][0] += int(r[4] or 0)
        stays[str(r[0])][1] += int(r[5] or 0)
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "name": "Attach rate",
            "x": categories,
            "y": [stays[c][0] / stays[c][1] if stays[c][1] else None for c in categories],
            "yaxis": "y2",
            "marker": {"size": 10, "symbol": "diamond", "color": "#111827"},
            "hovertemplate": "%{y:.1%}",
        }
    )
    return {
        "data": data,
        "layout": _layout(
            "Add-on revenue and attach rate by category",
            barmode="group",
            hovermode="closest",
            yaxis2={**_RIGHT_AXIS, "tickformat": ".0%", "tickmode": "auto"},
        ),
    }


def channel_net(rows: list[Row], names: dict[Any, str]) -> Figure:
    """Per channel and currency: net room revenue and commission stacked to the room revenue."""
    y = [f"{names.get(r[0], str(r[0]))} · {r[1]}" for r in rows]
    return {
        "data": [
            _hbar("Net room revenue", y, [_num(r[5]) for r in rows], PALETTE[0]),
            _hbar("Commission", y, [_num(r[4]) for r in rows], PALETTE[3]),
        ],
        "layout": _across(
            "Room revenue excl. VAT by channel and currency: net of commission, and the commission",
            len(rows),
        ),
    }


GUEST_DIMENSIONS = (
    ("guest_type", "First or repeat guest"),
    ("country", "Country"),
    ("party_size", "Party size"),
    ("length_of_stay", "Length of stay"),
    ("booking_window", "Booking window"),
    ("arrival_weekday", "Arrival weekday"),
)


def guest_mix(dimension: str, title: str, rows: list[Row]) -> Figure:
    """One dimension's share of stays by bucket (countries by size, the rest in order)."""
    found = [r for r in rows if r[0] == dimension]
    if dimension == "country":
        found.sort(key=lambda r: (-int(r[3]), str(r[1])))
    total = sum(int(r[3]) for r in found)
    return {
        "data": [
            _bar(
                "Share of stays",
                [str(r[1]) for r in found],
                [int(r[3]) / total if total else None for r in found],
                PALETTE[0],
                hovertemplate="%{y:.1%}",
            )
        ],
        "layout": {
            **_layout(title, percent=True, hovermode="closest", showlegend=False),
            "height": 240,
            "xaxis": {"automargin": True, "type": "category"},
        },
    }
