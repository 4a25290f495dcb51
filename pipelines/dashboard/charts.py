"""Hand-drawn SVG charts: lines, bars, 100 % bars and the occupancy heatmap."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from pipelines.dashboard.constants import CHART_WIDTH, HEAT_STOPS, NO_SUPPLY, TODAY_COLOUR
from pipelines.dashboard.formatting import _date_range, _day, _e


def _svg_open(uid: str, width: int, height: int, title: str, desc: str) -> str:
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'role="img" aria-labelledby="{uid}-t {uid}-d">'
        f'<title id="{uid}-t">{_e(title)}</title><desc id="{uid}-d">{_e(desc)}</desc>'
    )


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo <= 0:
        hi = lo + 1.0
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start, stop = math.floor(lo / step), math.ceil(hi / step)
    return [round(i * step, 10) for i in range(start, stop + 1)]


def _date_ticks(first: date, last: date) -> list[date]:
    span = (last - first).days
    days = _date_range(first, last)
    if span <= 14:
        return days
    if span <= 75:
        return [d for d in days if d.weekday() == 0]
    every = 1 if span <= 400 else 3
    return [d for d in days if d.day == 1 and (d.month - 1) % every == 0]


def _tick(value: float) -> str:
    """Axis numbers stay short; the axis title carries the unit or currency."""
    if abs(value) >= 10_000:
        return f"{value / 1000:,.0f}k"
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}".rstrip("0")


def _tick_label(d: date, span: int) -> str:
    if span > 75:
        return f"{d:%b}" if d.month != 1 else f"{d:%b %Y}"
    return f"{d.day} {d:%b}"


def _heat_colour(value: float) -> str:
    v = min(max(value, 0.0), 1.0)
    for (p0, c0), (p1, c1) in itertools.pairwise(HEAT_STOPS):
        if v <= p1:
            t = (v - p0) / (p1 - p0)
            rgb = [
                round(
                    int(c0[i : i + 2], 16) + (int(c1[i : i + 2], 16) - int(c0[i : i + 2], 16)) * t
                )
                for i in (1, 3, 5)
            ]
            return "#" + "".join(f"{c:02x}" for c in rgb)
    return HEAT_STOPS[-1][1]


def _y_grid(ticks: Sequence[float], y: Callable[[float], float], left: int, plot_w: int) -> str:
    """A horizontal grid line per tick, with its value left of the plot."""
    return "".join(
        f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{y(t):.1f}" y2="{y(t):.1f}"/>'
        f'<text class="tick" x="{left - 8}" y="{y(t) + 4:.1f}" text-anchor="end">{_e(_tick(t))}</text>'
        for t in ticks
    )


def _axes(
    left: int, top: int, plot_w: int, plot_h: int, height: int, x_label: str, y_label: str
) -> str:
    """The x axis line under the plot, and both axis titles."""
    return (
        f'<line class="axis" x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}"/>'
        f'<text class="axis-label" x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">{_e(x_label)}</text>'
        f'<text class="axis-label" transform="translate(16 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">{_e(y_label)}</text>'
    )


@dataclass(frozen=True)
class _Series:
    name: str
    values: dict[Any, float | None]
    colour: str
    dashed: bool = False


def _legend(series: Iterable[tuple[str, str, bool]]) -> str:
    items = "".join(
        f'<li><span class="swatch{" dashed" if dashed else ""}" style="--c:{colour}"></span>'
        f"{_e(name)}</li>"
        for name, colour, dashed in series
    )
    return f'<ul class="legend">{items}</ul>'


def _line_chart(
    uid: str,
    *,
    title: str,
    desc: str,
    dates: Sequence[date],
    series: Sequence[_Series],
    y_label: str,
    fmt: Callable[[float], str],
    today: date | None = None,
    height: int = 280,
    x_label: str = "Stay date",
    width: int = CHART_WIDTH,
) -> str:
    """Daily lines with a shared x axis; one hover band per day lists every series."""
    left, right, top, bottom = 64, 18, 14, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for s in series for v in s.values.values() if v is not None]
    ticks = _nice_ticks(min(values, default=0.0), max(values, default=1.0))
    y0, y1 = ticks[0], ticks[-1]
    first, last = dates[0], dates[-1]
    span = max((last - first).days, 1)

    def x(d: date) -> float:
        return left + (d - first).days / span * plot_w

    def y(v: float) -> float:
        return top + plot_h - (v - y0) / (y1 - y0) * plot_h

    out = [_svg_open(uid, width, height, title, desc)]
    out.append(_y_grid(ticks, y, left, plot_w))
    for d in _date_ticks(first, last):
        out.append(
            f'<line class="axis" x1="{x(d):.1f}" x2="{x(d):.1f}" y1="{top + plot_h}" y2="{top + plot_h + 5}"/>'
            f'<text class="tick" x="{x(d):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{_e(_tick_label(d, span))}</text>'
        )
    out.append(_axes(left, top, plot_w, plot_h, height, x_label, y_label))
    if today is not None and first <= today <= last:
        out.append(
            f'<line class="today" x1="{x(today):.1f}" x2="{x(today):.1f}" y1="{top}" y2="{top + plot_h}"/>'
            f'<text class="today-label" x="{x(today) + 4:.1f}" y="{top + 10}">today</text>'
        )
    for s in series:
        path, pen_down = [], False
        for d in dates:
            v = s.values.get(d)
            if v is None:
                pen_down = False
                continue
            path.append(f"{'L' if pen_down else 'M'}{x(d):.1f} {y(v):.1f}")
            pen_down = True
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        out.append(f'<path class="line" d="{" ".join(path)}" stroke="{s.colour}"{dash}/>')
        if len(dates) <= 45:
            out.extend(
                f'<circle cx="{x(d):.1f}" cy="{y(v):.1f}" r="2.5" fill="{s.colour}"/>'
                for d in dates
                if (v := s.values.get(d)) is not None
            )
    band = plot_w / max(len(dates) - 1, 1)
    for d in dates:
        lines = [_day(d)] + [
            f"{s.name}: {fmt(v) if (v := s.values.get(d)) is not None else 'no data'}"
            for s in series
        ]
        out.append(
            f'<rect class="hover" x="{x(d) - band / 2:.1f}" y="{top}" width="{band:.1f}" height="{plot_h}">'
            f"<title>{_e(chr(10).join(lines))}</title></rect>"
        )
    out.append("</svg>")
    return _legend((s.name, s.colour, s.dashed) for s in series) + "".join(out)


def _bar_chart(
    uid: str,
    *,
    title: str,
    desc: str,
    categories: Sequence[str],
    series: Sequence[_Series],
    y_label: str,
    x_label: str,
    fmt: Callable[[float], str],
    stacked: bool = False,
    height: int = 280,
) -> str:
    """Grouped (or stacked) vertical bars per category; each bar has its own tooltip."""
    width, left, right, top, bottom = CHART_WIDTH, 64, 18, 14, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    if stacked:
        totals = [sum(s.values.get(c) or 0.0 for s in series) for c in categories]
    else:
        totals = [s.values.get(c) or 0.0 for s in series for c in categories]
    ticks = _nice_ticks(0.0, max(totals, default=1.0))
    y1 = ticks[-1]

    def y(v: float) -> float:
        return top + plot_h - v / y1 * plot_h

    slot = plot_w / max(len(categories), 1)
    group_w = slot * 0.72
    bar_w = group_w if stacked else group_w / max(len(series), 1)
    out = [_svg_open(uid, width, height, title, desc)]
    out.append(_y_grid(ticks, y, left, plot_w))
    for i, cat in enumerate(categories):
        x0 = left + i * slot + (slot - group_w) / 2
        base = 0.0
        for j, s in enumerate(series):
            v = s.values.get(cat)
            if v is None or v == 0:
                continue
            bx = x0 if stacked else x0 + j * bar_w
            lo, hi = (base, base + v) if stacked else (0.0, v)
            out.append(
                f'<rect class="bar" x="{bx:.1f}" y="{y(hi):.1f}" width="{max(bar_w - 1, 1):.1f}" '
                f'height="{max(y(lo) - y(hi), 0.5):.1f}" fill="{s.colour}">'
                f"<title>{_e(f'{cat} · {s.name}: {fmt(v)}')}</title></rect>"
            )
            base += v if stacked else 0.0
        out.append(
            f'<text class="tick" x="{x0 + group_w / 2:.1f}" y="{top + plot_h + 18}" '
            f'text-anchor="middle">{_e(cat)}</text>'
        )
    out.append(_axes(left, top, plot_w, plot_h, height, x_label, y_label) + "</svg>")
    return _legend((s.name, s.colour, False) for s in series) + "".join(out)


def _share_bars(
    uid: str,
    *,
    title: str,
    desc: str,
    rows: Sequence[tuple[str, dict[str, float]]],
    keys: Sequence[str],
    colours: dict[str, str],
    detail: Callable[[str, str], str],
) -> str:
    """100 % horizontal bars, one per row label; segments labelled when wide enough."""
    width, left, right, top, row_h = CHART_WIDTH, 90, 18, 8, 26
    plot_w = width - left - right
    height = top + len(rows) * row_h + 28
    out = [_svg_open(uid, width, height, title, desc)]
    for i, (label, shares) in enumerate(rows):
        yy = top + i * row_h
        out.append(
            f'<text class="tick" x="{left - 8}" y="{yy + row_h / 2 + 4:.1f}" text-anchor="end">{_e(label)}</text>'
        )
        total = sum(shares.values()) or 1.0
        xx = float(left)
        for key in keys:
            share = shares.get(key, 0.0) / total
            if share <= 0:
                continue
            w = share * plot_w
            out.append(
                f'<rect class="bar" x="{xx:.1f}" y="{yy + 3}" width="{max(w - 1, 0.5):.1f}" height="{row_h - 6}" '
                f'fill="{colours[key]}"><title>{_e(f"{label} · {key}: {share * 100:.1f} % ({detail(label, key)})")}</title></rect>'
            )
            if w > 44:
                out.append(
                    f'<text class="in-bar" x="{xx + w / 2:.1f}" y="{yy + row_h / 2 + 4:.1f}" '
                    f'text-anchor="middle">{share * 100:.0f} %</text>'
                )
            xx += w
    for t in (0, 25, 50, 75, 100):
        xx = left + t / 100 * plot_w
        out.append(
            f'<text class="tick" x="{xx:.1f}" y="{height - 8}" text-anchor="middle">{t} %</text>'
        )
    out.append("</svg>")
    return _legend((k, colours[k], False) for k in keys) + "".join(out)


def _heatmap(
    uid: str,
    *,
    title: str,
    desc: str,
    dates: Sequence[date],
    rows: Sequence[tuple[str, dict[date, tuple[float, float, float]]]],
    today: date,
) -> str:
    """Occupancy per row (location · type) and night; cells carry sold/available in a tooltip."""
    label_w = min(max((len(label) for label, _ in rows), default=10) * 7 + 16, 300)
    width, top, right, row_h, bottom = CHART_WIDTH, 22, 18, 20, 30
    plot_w = width - label_w - right
    cell_w = plot_w / max(len(dates), 1)
    height = top + len(rows) * row_h + bottom
    span = max((dates[-1] - dates[0]).days, 1)
    out = [_svg_open(uid, width, height, title, desc)]
    for d in _date_ticks(dates[0], dates[-1]):
        xx = label_w + (d - dates[0]).days * cell_w
        out.append(
            f'<line class="axis" x1="{xx:.1f}" x2="{xx:.1f}" y1="{top - 4}" y2="{top + len(rows) * row_h}"/>'
            f'<text class="tick" x="{xx + 2:.1f}" y="{top - 8}">{_e(_tick_label(d, span))}</text>'
        )
    for i, (label, cells) in enumerate(rows):
        yy = top + i * row_h
        out.append(
            f'<text class="row-label" x="{label_w - 8}" y="{yy + row_h / 2 + 4:.1f}" text-anchor="end">{_e(label)}</text>'
        )
        for k, d in enumerate(dates):
            sold, available, hold = cells.get(d, (0.0, 0.0, 0.0))
            if available > 0:
                occ = sold / available
                fill = _heat_colour(occ)
                tip = (
                    f"{label}\n{_day(d)}\nOccupancy {occ * 100:.1f} %\n"
                    f"{sold:,.0f} of {available:,.0f} nights sold"
                    + (f", {hold:,.0f} owner/hold" if hold else "")
                )
            else:
                fill, tip = NO_SUPPLY, f"{label}\n{_day(d)}\nNo units available"
            out.append(
                f'<rect x="{label_w + k * cell_w:.2f}" y="{yy + 1}" width="{cell_w + 0.05:.2f}" '
                f'height="{row_h - 2}" fill="{fill}"><title>{_e(tip)}</title></rect>'
            )
    if dates[0] <= today <= dates[-1]:
        xx = label_w + (today - dates[0]).days * cell_w
        out.append(
            f'<line class="today" x1="{xx:.1f}" x2="{xx:.1f}" y1="{top - 2}" y2="{top + len(rows) * row_h + 2}"/>'
            f'<text class="today-label" x="{xx + 3:.1f}" y="{top + len(rows) * row_h + 16}">today</text>'
        )
    out.append(
        f'<text class="axis-label" x="{label_w + plot_w:.1f}" y="{height - 4}" text-anchor="end">Night</text></svg>'
    )
    ramp = ", ".join(f"{c} {p * 100:.0f}%" for p, c in HEAT_STOPS)
    legend = (
        '<div class="heat-legend" aria-hidden="true"><span>0 %</span>'
        f'<span class="ramp" style="background:linear-gradient(90deg, {ramp})"></span>'
        '<span>100 % occupied</span><span class="swatch" style="--c:'
        f'{NO_SUPPLY}"></span><span>no units available</span>'
        f'<span class="swatch" style="--c:{TODAY_COLOUR}"></span><span>today</span></div>'
    )
    return legend + "".join(out)
