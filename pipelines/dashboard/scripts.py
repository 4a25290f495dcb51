"""The page's two scripts: plotly.js as the pinned plotly package ships it, and the page script
that draws the embedded figures. `reservoir serve` serves them; the snapshot inlines them."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import plotly
from plotly.offline import get_plotlyjs

PAGE_JS = Path(__file__).with_name("static") / "app.js"
PLOTLY_VERSION = plotly.__version__


@cache
def plotly_js() -> str:
    return get_plotlyjs()


def page_js() -> str:
    return PAGE_JS.read_text(encoding="utf-8")


def _inline(js: str) -> str:
    # a "</script" inside the code would end the element early
    return "<script>" + re.sub(r"</(script)", r"<\\/\1", js, flags=re.IGNORECASE) + "</script>"


def inline_tags() -> str:
    """Both scripts inlined: the snapshot opens offline, from a file or a mail."""
    return _inline(plotly_js()) + _inline(page_js())


def linked_tags() -> str:
    """Both scripts from the app's /static (cached by the browser)."""
    return (
        f'<script src="/static/plotly-{PLOTLY_VERSION}.min.js"></script>'
        '<script src="/static/app.js" defer></script>'
    )
