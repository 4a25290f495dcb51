"""How the catalogue's streams fan a full read out into calls (`EndpointSpec.fan_out`): per
accommodation type, per journal report, in windows of the availability horizon, or the event feed
after the customer merges' cursor (whose records are the feed's MERGE events: `is_customer_merge`).
The holder-scoped streams' fan-out is `assets.holders.per_holder`.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from assets.endpoints import FanOut
from service.api import date_windows
from service.config import DEFAULT_AVAILABILITY_WINDOW_DAYS


def per_accommodation_type(ctx: FanOut) -> list[dict[str, Any]]:
    return [{"resource_id": i} for i in ctx.lake.current_ids("accommodation_types", "resource_id")]


def per_journal_report(ctx: FanOut) -> list[dict[str, Any]]:
    ids = ctx.lake.current_ids("journal_reports", "journal_report_id")
    return [{"report_id": i} for i in ids]


def arrival_windows(ctx: FanOut) -> list[dict[str, Any]]:
    """The horizon in windows of at most 31 arrival dates (the endpoint's limit)."""
    if ctx.today is None:
        raise RuntimeError("internal error: the availability horizon needs the business date")
    end = ctx.today + timedelta(days=max(ctx.horizon_days, 1) - 1)
    windows = date_windows(ctx.today, end, DEFAULT_AVAILABILITY_WINDOW_DAYS)
    return [{"arrival_from": start, "arrival_to": stop} for start, stop in windows]


def after_merge_cursor(ctx: FanOut) -> list[dict[str, Any]]:
    state = ctx.lake.read_state("cursor_customer_merges") or {}
    return [{"after_event_id": int(state.get("cursor") or 0)}]


def is_customer_merge(event: dict[str, Any]) -> bool:
    return event.get("entityAction") == "MERGE" and event.get("eventType") == "CUSTOMER_EVENT"
