"""HTML blocks of the page that are not charts: the headline tiles and tables.

Tables stack into label/value cards below 640 px (each cell carries its column's name), so no
column leaves a phone's screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from pipelines.dashboard.formatting import _e, _money, _num, _pct
from pipelines.dashboard.views import PageData
from warehouse.semantic_query import Answer

_TILES = (
    ("occupancy", "Occupancy", "nights sold / nights available"),
    ("room_revenue_net", "Room revenue", "excl. VAT"),
    ("adr_net", "ADR", "room revenue / nights sold, excl. VAT"),
    ("revpar_net", "RevPAR", "room revenue / nights available, excl. VAT"),
    ("adr_after_commission_net", "Net ADR", "after commission, excl. VAT"),
    ("commission_net", "Commission", "excl. VAT"),
)


def table(
    heads: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    caption: str = "",
    raw: bool = False,
    wide: bool = False,
) -> str:
    """A table; cells are escaped unless `raw` (then the caller escaped them)."""
    body = "".join(
        "<tr>"
        + "".join(
            f'<td data-label="{_e(h)}">{c if raw else _e(c)}</td>'
            for h, c in zip(heads, row, strict=True)
        )
        + "</tr>"
        for row in rows
    )
    if not body:
        return '<p class="empty">No data for these filters.</p>'
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in heads)
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    cls = "data wide" if wide else "data"
    return (
        f'<div class="table-wrap"><table class="{cls}">{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _change(now: Any, before: Any) -> str:
    if now is None or before is None or not before:
        return ""
    change = (Decimal(str(now)) - Decimal(str(before))) / abs(Decimal(str(before)))
    sign = "up" if change > 0 else "down" if change < 0 else "flat"
    text = ("+" if change > 0 else "") + _pct(change)
    return f'<span class="change {sign}">{_e(text)}</span>'


def _values(answer: Answer, before: Answer) -> str:
    """One line per currency (or one line) of value, last year's value and the change."""
    kind = answer.metric.kind
    last = {row[0] if answer.metric.per_currency else None: row[-1] for row in before.rows}
    lines = []
    for row in answer.rows:
        key = row[0] if answer.metric.per_currency else None
        value, ly = row[-1], last.get(key)
        if answer.metric.per_currency and value is None and ly is None:
            continue
        if kind == "ratio":
            shown, was = _pct(value), _pct(ly)
        elif kind == "money":
            shown, was = _money(value, str(key)), _money(ly, str(key))
        else:
            shown, was = _num(value), _num(ly)
        lines.append(
            f'<div class="tile-line"><span class="tile-value">{_e(shown)}</span>'
            f"{_change(value, ly)}"
            f'<span class="tile-ly">last year {_e(was)}</span></div>'
        )
    return "".join(lines) or '<div class="tile-line">–</div>'


def tiles(data: PageData) -> str:
    out = []
    for name, label, definition in _TILES:
        answer, before = data.tiles[name], data.tiles_ly[name]
        out.append(
            f'<div class="tile" data-metric="{name}"><div class="tile-label">{_e(label)}</div>'
            f'<div class="tile-def">{_e(definition)}</div>{_values(answer, before)}</div>'
        )
    return f'<div class="tiles">{"".join(out)}</div>'
