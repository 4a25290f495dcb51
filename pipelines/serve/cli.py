"""The `reservoir serve` and `reservoir export` commands (registered by `pipelines.cli`); the
web stack is imported only when one of them runs, so the CLI starts fast."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipelines.cli_support import built_warehouse, fail, load_settings


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on (local only by default).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port of the web app.")] = 8050,
) -> None:
    """Serve the dashboard (filters, drill-down) and the metrics feed (/api), read-only."""
    from pipelines.serve.commands import serve

    serve(built_warehouse(load_settings()), host=host, port=port)


def export_command(
    name: Annotated[
        str,
        typer.Argument(
            help="A metric (GET /api/metrics) or a mart: sales, supply, revenue, forecast, bookings."
        ),
    ],
    by: Annotated[
        list[str] | None, typer.Option(help="Dimensions, e.g. --by month,currency.")
    ] = None,
    where: Annotated[
        list[str] | None, typer.Option(help="Filters KEY=VALUE, e.g. --where park=1.")
    ] = None,
    output: Annotated[str, typer.Option("--format", help="json, csv or parquet.")] = "csv",
    out: Annotated[Path | None, typer.Option(help="File to write (default: stdout).")] = None,
) -> None:
    """Export a metric by dimensions, or a slice of a mart, as the feed serves it."""
    from pipelines.dashboard import DashboardError
    from pipelines.serve.commands import export
    from warehouse.semantic_query import FeedError

    settings = load_settings()
    try:
        rows = export(
            settings.warehouse_path,
            name,
            by=by or [],
            where=where or [],
            fmt=output,
            out=out,
        )
    except (FeedError, DashboardError) as exc:
        raise fail(str(exc)) from None
    if out is not None:
        typer.echo(f"{rows} rows written to {out}")
