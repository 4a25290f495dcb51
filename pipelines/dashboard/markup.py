"""The page's HTML building blocks other than charts: tables, sections, "no data"."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pipelines.dashboard.formatting import _e


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


def _section(key: str, title: str, intro: str, body: str) -> str:
    return (
        f'<section id="{key}" aria-labelledby="{key}-h"><h2 id="{key}-h">{_e(title)}</h2>'
        f'<p class="intro">{_e(intro)}</p>{body}</section>'
    )
