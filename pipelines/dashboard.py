"""`reservoir dashboard`: one self-contained HTML page drawn from the marts.

The page carries its own CSS and hand-drawn SVG charts and no script at all, so it opens
anywhere (mail attachment, file share, offline laptop) and cannot call out to the network; a
Content-Security-Policy says so to the browser too. Every figure is recomputed from additive
sums (nights, money) over the period shown, never by averaging ratios, and money is only ever
added up within one currency.
"""

from __future__ import annotations

import html
import itertools
import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import duckdb

PAST_DAYS = 90
FUTURE_DAYS = 90
KPI_DAYS = 30
PACE_HORIZONS = (30, 60, 90)
PICKUP_DAYS = 7
MONTHS_SHOWN = 12
RATE_TYPES_CHARTED = 6
CHART_WIDTH = 1160
PALETTE = (
    "#2563eb",
    "#f59e0b",
    "#10b981",
    "#e11d48",
    "#8b5cf6",
    "#0891b2",
    "#db2777",
    "#65a30d",
    "#64748b",
    "#b45309",
)
HEAT_STOPS = (
    (0.0, "#f4f8fc"),
    (0.3, "#bcd5ec"),
    (0.6, "#5b9bd0"),
    (0.85, "#1f5fa8"),
    (1.0, "#0b2f66"),
)
NO_SUPPLY = "#e5e7eb"
TODAY_COLOUR = "#f97316"


class DashboardError(Exception):
    """The dashboard cannot be built; the message says what to do."""


class _Unavailable(Exception):
    """A mart lacks a column a section needs; the section says so instead of failing."""


# --------------------------------------------------------------------------------- the marts


@dataclass(frozen=True)
class _Mart:
    """One marts table as found in the warehouse, with a resolver for its column names."""

    name: str
    columns: tuple[str, ...]
    rows: int

    def col(self, *candidates: str, required: bool = True) -> str | None:
        for name in candidates:
            if name in self.columns:
                return name
        if required:
            raise _Unavailable(f"marts.{self.name} has none of the columns {', '.join(candidates)}")
        return None

    def q(self, *candidates: str) -> str:
        """The quoted identifier of the first candidate present (names come from the catalog)."""
        name = self.col(*candidates)
        assert name is not None
        return '"' + name.replace('"', '""') + '"'

    def q_opt(self, *candidates: str) -> str | None:
        name = self.col(*candidates, required=False)
        return None if name is None else '"' + name.replace('"', '""') + '"'

    @property
    def ref(self) -> str:
        return 'marts."' + self.name.replace('"', '""') + '"'


def _load_marts(con: duckdb.DuckDBPyConnection) -> dict[str, _Mart]:
    found: dict[str, list[str]] = defaultdict(list)
    for table, column in con.execute(
        "select table_name, column_name from information_schema.columns "
        "where table_schema = ? order by table_name, ordinal_position",
        ["marts"],
    ).fetchall():
        found[table].append(column)
    marts = {}
    for table, columns in found.items():
        mart = _Mart(table, tuple(columns), 0)
        (rows,) = con.execute(f"select count(*) from {mart.ref}").fetchone() or (0,)
        marts[table] = _Mart(table, tuple(columns), int(rows))
    return marts


# Column names per logical field, as the marts models spell them (the first one present wins:
# booking_pace keys on stay_date, the daily marts on date_day).
DATE = ("date_day", "stay_date", "night_date")
MONTH = ("month_start", "month")
CURRENCY = ("currency_code",)
CHANNEL = ("distribution_channel_code", "distribution_channel_id")
AS_OF = ("as_of_date",)


# ------------------------------------------------------------------------------- formatting


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _dec(value: object) -> Decimal | None:
    if value is None:
        return None
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _ratio(num: object, den: object) -> Decimal | None:
    n, d = _dec(num), _dec(den)
    if n is None or d is None or d == 0:
        return None
    return n / d


def _pct(value: object, digits: int = 1) -> str:
    v = _dec(value)
    if v is None:
        return "–"
    q = Decimal(1).scaleb(-digits)
    return f"{(v * 100).quantize(q, rounding=ROUND_HALF_UP):,} %"


def _money(value: object, currency: str) -> str:
    v = _dec(value)
    if v is None:
        return "–"
    return f"{currency} {v.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"


def _num(value: object, digits: int = 0) -> str:
    v = _dec(value)
    if v is None:
        return "–"
    return f"{v.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP):,}"


def _signed_pct(value: object) -> str:
    v = _dec(value)
    if v is None:
        return "–"
    return ("+" if v > 0 else "") + _pct(v)


def _day(d: date) -> str:
    return f"{d:%a} {d.day} {d:%b %Y}"


def _month(d: date) -> str:
    return f"{d:%b %Y}"


def _f(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _as_date(value: object) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


# ------------------------------------------------------------------------------ SVG drawing


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
    days = [first + timedelta(n) for n in range(span + 1)]
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
    for t in ticks:
        out.append(
            f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{y(t):.1f}" y2="{y(t):.1f}"/>'
            f'<text class="tick" x="{left - 8}" y="{y(t) + 4:.1f}" text-anchor="end">{_e(_tick(t))}</text>'
        )
    for d in _date_ticks(first, last):
        out.append(
            f'<line class="axis" x1="{x(d):.1f}" x2="{x(d):.1f}" y1="{top + plot_h}" y2="{top + plot_h + 5}"/>'
            f'<text class="tick" x="{x(d):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{_e(_tick_label(d, span))}</text>'
        )
    out.append(
        f'<line class="axis" x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}"/>'
        f'<text class="axis-label" x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">{_e(x_label)}</text>'
        f'<text class="axis-label" transform="translate(16 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">{_e(y_label)}</text>'
    )
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
    for t in ticks:
        out.append(
            f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{y(t):.1f}" y2="{y(t):.1f}"/>'
            f'<text class="tick" x="{left - 8}" y="{y(t) + 4:.1f}" text-anchor="end">{_e(_tick(t))}</text>'
        )
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
    out.append(
        f'<line class="axis" x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}"/>'
        f'<text class="axis-label" x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle">{_e(x_label)}</text>'
        f'<text class="axis-label" transform="translate(16 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">{_e(y_label)}</text>'
        "</svg>"
    )
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


def _table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], *, caption: str, numeric_from: int = 1
) -> str:
    head = "".join(
        f'<th scope="col"{" class=num" if i >= numeric_from else ""}>{_e(h)}</th>'
        for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{_e(v)}</td>' if i >= numeric_from else f"<td>{_e(v)}</td>"
            for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return (
        f"<table><caption>{_e(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def _empty(message: str) -> str:
    return f'<p class="empty" role="status">No data: {_e(message)}</p>'


# ------------------------------------------------------------------------------- sections


def _table_columns(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> set[str]:
    return {
        r[0]
        for r in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = ? and table_name = ?",
            [schema, table],
        ).fetchall()
    }


@dataclass(frozen=True)
class _Labels:
    """Readable names for the ids the marts carry, from the dimensions when they are there."""

    types: dict[Any, str]
    rate_types: dict[Any, str]

    @classmethod
    def load(cls, con: duckdb.DuckDBPyConnection) -> _Labels:
        types: dict[Any, str] = {}
        wanted = {"accommodation_type_id", "location_code", "accommodation_type_code"}
        cols = _table_columns(con, "core", "dim_accommodation_types")
        if wanted <= cols:
            name = "accommodation_type_name" if "accommodation_type_name" in cols else "null"
            for type_id, loc, code, type_name in con.execute(
                f"select accommodation_type_id, location_code, accommodation_type_code, {name} "
                "from core.dim_accommodation_types"
            ).fetchall():
                types[type_id] = f"{loc} · {type_name or code}"
        rate_types: dict[Any, str] = {}
        cols = _table_columns(con, "staging", "stg_rate_types")
        if {"rate_type_id", "rate_type_code"} <= cols:
            name = "rate_type_name" if "rate_type_name" in cols else "null"
            for rate_id, code, rate_name in con.execute(
                f"select rate_type_id, rate_type_code, {name} from staging.stg_rate_types"
            ).fetchall():
                rate_types[rate_id] = str(rate_name or code)
        return cls(types, rate_types)

    def type(self, type_id: object, fallback: str | None = None) -> str:
        if type_id in self.types:
            return self.types[type_id]
        return fallback or ("no accommodation type" if type_id is None else f"type {type_id}")

    def rate_type(self, rate_id: object) -> str:
        if rate_id in self.rate_types:
            return self.rate_types[rate_id]
        return "no rate type" if rate_id is None else f"rate type {rate_id}"


@dataclass(frozen=True)
class _Ctx:
    con: duckdb.DuckDBPyConnection
    marts: dict[str, _Mart]
    today: date
    _labels: list[_Labels] = field(default_factory=list)

    def mart(self, name: str) -> _Mart | None:
        """The mart when it exists and has rows; None means the section shows "no data"."""
        mart = self.marts.get(name)
        return mart if mart is not None and mart.rows > 0 else None

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, list(params)).fetchall()

    def window(self, mart: _Mart, date_col: str) -> tuple[date, date] | None:
        """Today - PAST_DAYS .. today + FUTURE_DAYS, or the latest data when that is empty."""
        lo, hi = self.rows(f"select min({date_col}), max({date_col}) from {mart.ref}")[0]
        if lo is None or hi is None:
            return None
        lo, hi = _as_date(lo), _as_date(hi)
        start = max(lo, self.today - timedelta(PAST_DAYS))
        end = min(hi, self.today + timedelta(FUTURE_DAYS))
        if start > end:
            end, start = hi, max(lo, hi - timedelta(PAST_DAYS + FUTURE_DAYS))
        return start, end

    def labels(self) -> _Labels:
        if not self._labels:
            self._labels.append(_Labels.load(self.con))
        return self._labels[0]


def _section(key: str, title: str, intro: str, body: str) -> str:
    return (
        f'<section id="{key}" aria-labelledby="{key}-h"><h2 id="{key}-h">{_e(title)}</h2>'
        f'<p class="intro">{_e(intro)}</p>{body}</section>'
    )


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

    occ, rev = ctx.mart("occupancy_daily"), ctx.mart("revenue_daily")
    occupancy, adr, revpar = [], [], []
    for _period, start, end in periods:
        if occ is None:
            occupancy.append(("–", "no occupancy data"))
        else:
            sold, avail = ctx.rows(
                f"select sum({occ.q('nights_sold')}), sum({occ.q('nights_available')}) "
                f"from {occ.ref} where {occ.q(*DATE)} between ? and ?",
                [start, end],
            )[0]
            note = f"{_num(sold)} of {_num(avail)} nights sold" if avail else "no nights available"
            occupancy.append((_e(_pct(_ratio(sold, avail))), note))
        if rev is None:
            adr.append(("–", "no revenue data"))
            revpar.append(("–", "no revenue data"))
            continue
        found = ctx.rows(
            f"select {rev.q(*CURRENCY)}, sum({rev.q('room_revenue')}), "
            f"sum({rev.q('nights_sold')}), sum({rev.q('nights_available')}) from {rev.ref} "
            f"where {rev.q(*DATE)} between ? and ? group by 1 order by 1",
            [start, end],
        )
        for out, column in ((adr, 2), (revpar, 3)):
            values = "".join(
                f'<span class="cur">{_e(_money(_ratio(r[1], r[column]), str(r[0])))}</span>'
                for r in found
            )
            out.append((values or "–", "per currency" if found else "no revenue data"))
    tiles = (
        tile("Occupancy", "nights sold / nights available", occupancy),
        tile("ADR", "room revenue / nights sold", adr),
        tile("RevPAR", "room revenue / nights available", revpar),
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
    dates = [start + timedelta(n) for n in range((end - start).days + 1)]
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
    room, total = mart.q("room_revenue"), mart.q("total_revenue")
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
    dates = [start + timedelta(n) for n in range((end - start).days + 1)]
    parts = []
    for i, (currency, rows) in enumerate(sorted(per_currency.items())):
        adr = {_as_date(r[0]): _f(_ratio(r[1], r[2])) for r in rows}
        revpar = {_as_date(r[0]): _f(_ratio(r[1], r[3])) for r in rows}
        trevpar = {_as_date(r[0]): _f(_ratio(r[4], r[3])) for r in rows}
        parts.append(
            f"<h3>{_e(currency)}</h3>"
            + _line_chart(
                f"rev{i}",
                title=f"ADR, RevPAR and TRevPAR per night in {currency}",
                desc=f"Daily ADR (room revenue / nights sold), RevPAR (room revenue / nights "
                f"available) and TRevPAR in {currency}, {_day(start)} – {_day(end)}; nights "
                "from today on are on the books.",
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
    dates = [latest + timedelta(n) for n in range((last_night - latest).days + 1)]
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
        caption="Room revenue on the books, per currency",
        numeric_from=2,
    )
    return f'<div class="scroll">{chart}</div><div class="two">{nights}{money}</div>'


def _channel_mix(ctx: _Ctx) -> str:
    mart = ctx.mart("channel_mix_monthly")
    if mart is None:
        return _empty("marts.channel_mix_monthly is empty.")
    m, ch, cur = mart.q(*MONTH), mart.q(*CHANNEL), mart.q(*CURRENCY)
    sold, room = mart.q("nights_sold"), mart.q("room_revenue")
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
    for month, channel, _c, sold, _r in found:
        nights[_month(_as_date(month))][str(channel)] += float(sold or 0)
        channels[str(channel)] += float(sold or 0)
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
            "Room revenue",
            "Share of revenue (in currency)",
            "ADR",
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
    dates = [start + timedelta(n) for n in range((end - start).days + 1)]
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
                desc=f"Nightly list price and realised ADR of {name} in {c}, "
                f"{_day(start)} – {_day(end)}.",
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


SECTIONS: tuple[tuple[str, str, str, Callable[[_Ctx], str]], ...] = (
    (
        "occupancy",
        "Occupancy by night and accommodation type",
        "Nights sold / nights available per night. Darker is fuller; nights from today on show "
        "what is on the books now. Hover a cell for the figures.",
        _occupancy,
    ),
    (
        "revenue",
        "ADR and RevPAR over time",
        "Daily, per currency (figures in different currencies are never added together).",
        _revenue,
    ),
    (
        "pace",
        "Booking pace against last year",
        "Nights on the books for the coming stay nights against the same stay nights last year "
        "at the same number of days before arrival.",
        _pace,
    ),
    (
        "channels",
        "Channel mix",
        "Share of nights sold and of room revenue per distribution channel.",
        _channel_mix,
    ),
    ("cancellations", "Cancellations", "By the month the reservation was created.", _cancellations),
    (
        "rates",
        "List price against realised price",
        "The published nightly list price against the ADR actually realised, and the "
        "availability left.",
        _rates,
    ),
)


CSS = """
:root{--ink:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f6f7f9;--card:#fff;--accent:#2563eb}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif}
header{background:#0f2747;color:#fff;padding:20px 32px}
header h1{margin:0;font-size:22px;font-weight:600}
header p{margin:4px 0 0;color:#c7d2e3}
nav{display:flex;flex-wrap:wrap;gap:4px 18px;margin-top:10px}
nav a{color:#e5edf8;text-decoration:none;font-size:13px}
nav a:hover,nav a:focus{text-decoration:underline}
main{max-width:1240px;margin:0 auto;padding:20px 24px 40px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;
padding:18px 22px;margin:18px 0;box-shadow:0 1px 2px rgba(15,23,42,.04)}
h2{font-size:18px;margin:0 0 4px}
h3{font-size:14px;margin:18px 0 4px;color:#374151}
.intro{margin:0 0 12px;color:var(--muted)}
.summary{margin:0 0 8px;font-weight:500}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:14px}
.tile{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;
border-top:4px solid var(--accent)}
.tile-label{font-weight:650;font-size:16px}
.tile-def{color:var(--muted);font-size:12px;margin-bottom:8px}
.halves{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.half+.half{border-left:1px solid var(--line);padding-left:12px}
.tile-period{font-size:12px;font-weight:600;color:#374151}
.tile-period .dates{display:block;font-weight:400;color:var(--muted)}
.tile-value{font-size:26px;font-weight:650;margin:6px 0 2px;font-variant-numeric:tabular-nums;
line-height:1.2}
.tile-value .cur{display:block;font-size:20px}
.tile-sub{color:var(--muted);font-size:12px}
.two{display:grid;grid-template-columns:1fr 1fr;gap:0 24px}
.multiples{display:grid;grid-template-columns:1fr 1fr;gap:8px 24px;margin-top:8px}
figure{margin:0}
figcaption{font-weight:600;font-size:13px;color:#374151;margin-top:12px}
@media (max-width:900px){.two,.multiples{grid-template-columns:1fr}}
.scroll{overflow-x:auto}
svg.chart{display:block;width:100%;height:auto;margin:4px 0 8px}
svg text{font-family:inherit}
.grid{stroke:#eef0f3}
.axis{stroke:#9ca3af}
.tick{fill:#4b5563;font-size:11px}
.row-label{fill:#1f2937;font-size:11.5px}
.axis-label{fill:#374151;font-size:12px;font-weight:600}
.line{fill:none;stroke-width:2;stroke-linejoin:round;stroke-linecap:round}
.today{stroke:$today;stroke-width:2;stroke-dasharray:4 3}
.today-label{fill:$today;font-size:11px;font-weight:600}
.hover{fill:transparent}
.hover:hover{fill:rgba(37,99,235,.08)}
.bar:hover,rect:hover{opacity:.85}
.in-bar{fill:#fff;font-size:11px;font-weight:600;pointer-events:none}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;list-style:none;padding:0;margin:6px 0 0;
font-size:12.5px}
.legend li{display:flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:14px;height:10px;border-radius:2px;background:var(--c)}
.swatch.dashed{height:0;border-top:3px dashed var(--c);background:none}
.heat-legend{display:flex;align-items:center;gap:8px;font-size:12.5px;color:#374151;margin:6px 0}
.heat-legend .ramp{display:inline-block;width:180px;height:10px;border-radius:2px;
border:1px solid var(--line)}
.heat-legend .swatch{margin-left:12px}
table{border-collapse:collapse;width:100%;margin-top:10px;font-size:13px;
font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);font-size:12px;padding-bottom:4px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left}
th{background:#f9fafb;font-weight:600;color:#374151}
.num{text-align:right;white-space:nowrap}
tbody tr:hover{background:#f8fafc}
.empty{padding:18px;border:1px dashed #cbd5e1;border-radius:8px;color:var(--muted);
background:#fafafa;margin:0}
footer{color:var(--muted);font-size:12px;text-align:center;padding:0 0 30px}
""".replace("$today", TODAY_COLOUR)


def render_dashboard(con: duckdb.DuckDBPyConnection, *, today: date, source: str) -> str:
    """The whole page as one string, from an open (read-only) warehouse connection."""
    ctx = _Ctx(con, _load_marts(con), today)
    sections = []
    for key, title, intro, build in SECTIONS:
        try:
            body = build(ctx)
        except _Unavailable as exc:
            body = _empty(f"{exc}; rebuild the warehouse with this version.")
        sections.append(_section(key, title, intro, body))
    try:
        kpis = _kpis(ctx)
    except _Unavailable as exc:
        kpis = _empty(f"{exc}; rebuild the warehouse with this version.")
    nav = "".join(f'<a href="#{key}">{_e(title)}</a>' for key, title, *_ in SECTIONS)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Reservoir dashboard · {_e(today.isoformat())}</title>"
        f"<style>{CSS}</style></head><body>"
        "<header><h1>Revenue and occupancy</h1>"
        f"<p>As of {_e(_day(today))} · built from {_e(source)} · generated {_e(generated)}</p>"
        f'<nav aria-label="Sections">{nav}</nav></header>'
        '<main><section id="kpis" aria-labelledby="kpis-h"><h2 id="kpis-h">Headline figures</h2>'
        '<p class="intro">Occupancy = nights sold / nights available; ADR = room revenue / '
        "nights sold; RevPAR = room revenue / nights available. Money per currency.</p>"
        f"{kpis}</section>{''.join(sections)}</main>"
        "<footer>Figures follow the project's metric definitions: stay nights, on-the-books "
        "statuses, revenue allocated to nights, money kept per currency. Hover any chart "
        "element for its figures.</footer>"
        "</body></html>\n"
    )


def build_dashboard(warehouse_path: Path, out_path: Path, *, today: date | None = None) -> Path:
    """Write the dashboard for `warehouse_path` to `out_path` (atomically) and return it."""
    warehouse_path, out_path = Path(warehouse_path), Path(out_path)
    if not warehouse_path.is_file():
        raise DashboardError(
            f"no warehouse at {warehouse_path}; run `reservoir run` first to build it"
        )
    today = today or date.today()
    con = duckdb.connect(str(warehouse_path), read_only=True)
    try:
        page = render_dashboard(con, today=today, source=warehouse_path.name)
    finally:
        con.close()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    # write beside the target and rename, so a reader never sees half a page
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, out_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out_path
