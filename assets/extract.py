"""Read one stream in full into the lake: plan its calls, land its pages, commit.

Kept free of Dagster so the benchmark and tests can call it directly; `assets.full.land_full`
runs it for every stream of a full run (`pipelines.lake_assets` in mode `full`, and the
bootstrap). The rows go through the one landing engine (`assets.landing.Landing`, streaming:
memory stays bounded, each table's writer flushes every `flush_rows` rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

from assets.endpoints import EndpointSpec, FanOut
from assets.landing import Landing, LandReport
from assets.pages import PageStream, requests_used
from assets.settings import IngestSettings
from lake.store import Lake

Record = dict[str, Any]
Pages = Iterable[tuple[Sequence[Record], datetime]]


def plan_calls(spec: EndpointSpec, lake: Lake, settings: IngestSettings) -> list[dict[str, Any]]:
    """Keyword arguments of each facade call (one call unless the spec fans out)."""
    if spec.fan_out is None:
        return [dict(spec.kwargs)]
    ctx = FanOut(lake=lake, today=settings.today, horizon_days=settings.horizon_days)
    return [{**spec.kwargs, **kw} for kw in spec.fan_out(ctx)]


def run_spec(
    spec: EndpointSpec,
    *,
    lake: Lake,
    batch_id: str,
    settings: IngestSettings,
    open_client: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
    pages: Pages | None = None,
) -> LandReport:
    """Extract one spec into the lake: from the service (`open_client`) or given `pages`."""
    stream: PageStream | None = None
    calls: list[dict[str, Any]] = []
    if pages is None:
        if open_client is None:
            raise ValueError("run_spec needs open_client or pages")
        calls = plan_calls(spec, lake, settings)
        stream = PageStream(open_client, spec, calls)
        pages = stream
    landing = Landing(lake, spec, batch_id, spec.batch_kind, settings, hold=False)
    landing.report.calls = len(calls)
    try:
        landing.add_pages(pages)
    finally:
        if stream is not None:
            landing.report.requests = requests_used(stream.stats)
            landing.report.notes = list(stream.notes)
    report = landing.commit()
    if spec.cursor_field is not None and report.cursor is not None:
        lake.write_state(f"cursor_{spec.name}", batch_id, {"cursor": report.cursor})
    return report
