"""The Starlette application of `reservoir serve`: the page, its scripts, the feed.

Read-only by construction: GET routes only, a read-only DuckDB connection per request (closed
before the response is sent), and a Content-Security-Policy that lets the page talk to this
server alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from pipelines.dashboard import DashboardError, Filters, as_of, open_warehouse, render_dashboard
from pipelines.dashboard.formatting import _e
from pipelines.dashboard.scripts import PLOTLY_VERSION, linked_tags, page_js, plotly_js
from pipelines.serve import feed
from warehouse.semantic_query import FeedError

_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
_STATIC_CACHE = {"cache-control": "public, max-age=31536000, immutable"}


def create_app(warehouse_path: Path) -> Starlette:
    """The app over the warehouse file at `warehouse_path` (read at every request)."""
    warehouse_path = Path(warehouse_path)

    def with_warehouse(
        request: Request, answer: Callable[[duckdb.DuckDBPyConnection], Response], *, api: bool
    ) -> Response:
        try:
            con = open_warehouse(warehouse_path)
        except DashboardError as exc:
            return feed.error(str(exc), 503) if api else _page_error(str(exc), 503)
        except duckdb.IOException as exc:
            message = f"the warehouse at {warehouse_path} cannot be opened ({exc}); retry"
            return feed.error(message, 503) if api else _page_error(message, 503)
        try:
            response = answer(con)
        except FeedError as exc:
            return feed.error(str(exc)) if api else _page_error(str(exc), 400)
        finally:
            con.close()
        response.headers.update(_HEADERS)
        return response

    def page(request: Request) -> Response:
        def answer(con: duckdb.DuckDBPyConnection) -> Response:
            today, note = as_of(con, None, warehouse_path.name)
            filters = Filters.parse(today, request.query_params.multi_items())
            html = render_dashboard(
                con,
                filters,
                source=warehouse_path.name,
                as_of_note=note,
                mode="app",
                scripts=linked_tags(),
            )
            return HTMLResponse(html)

        try:
            return with_warehouse(request, answer, api=False)
        except DashboardError as exc:
            return _page_error(str(exc), 503)

    def metrics(request: Request) -> Response:
        return feed.metrics_index()

    def metric(request: Request) -> Response:
        name = request.path_params["name"]
        return with_warehouse(request, lambda con: feed.metric_answer(con, request, name), api=True)

    def export(request: Request) -> Response:
        source = request.path_params["source"]
        return with_warehouse(request, lambda con: feed.export(con, request, source), api=True)

    def plotly(request: Request) -> Response:
        return Response(plotly_js(), media_type="text/javascript", headers=_STATIC_CACHE)

    def script(request: Request) -> Response:
        return Response(
            page_js(), media_type="text/javascript", headers={"cache-control": "no-cache"}
        )

    def health(request: Request) -> Response:
        return PlainTextResponse("ok" if warehouse_path.is_file() else "no warehouse")

    return Starlette(
        routes=[
            Route("/", page),
            Route(f"/static/plotly-{PLOTLY_VERSION}.min.js", plotly),
            Route("/static/app.js", script),
            Route("/api/metrics", metrics),
            Route("/api/metrics/{name}", metric),
            Route("/api/export/{source}", export),
            Route("/healthz", health),
        ]
    )


def _page_error(message: str, status: int) -> Response:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Reservoir · cannot show this</title></head><body>"
        f'<h1>Cannot show this page</h1><p role="alert">{_e(message)}</p>'
        '<p><a href="/">Back to the default view</a></p></body></html>'
    )
    return HTMLResponse(body, status_code=status, headers=_HEADERS)
