"""One as-of clock: a run's business date is the service's date, never this machine's.

A sandbox runs on a clock of its own, and the service decides which day it is for its records
(clearances, open journal reports, the availability horizon). So each run reads the date from
the service before it uses one, in this order:

1. an override (`IngestSettings.today`; `LakeResource.availability_start`), for replays and tests;
2. the `Date` header of the service's responses (`service.clock.ServiceClock`): the run's first
   request states it; a run that has made none yet asks for the newest event (one small request);
3. the newest eventDate the run has seen, for a service that sends no `Date` header.

Without any of these the run stops (`ServiceDateUnknown`) instead of guessing from this machine.
The date is recorded with the run state (`lake.state.write_as_of`): the warehouse's as-of date,
the headline KPIs, the dashboard and `reservoir status` all read it from there.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol

from assets.fetch import run_sync
from assets.plan import event_time
from assets.settings import IngestSettings, OpenClient, Record
from lake.state import AsOf

FROM_HEADER = "the service's Date header"
FROM_EVENT = "the service's newest event"
FROM_OVERRIDE = "override"


class Report(Protocol):
    as_of: AsOf | None


class DatedRun(Protocol):
    """What fixing the date uses of a run (`assets.run.ChangeRun`)."""

    service: Any
    settings: IngestSettings
    report: Report


class ServiceDateUnknown(RuntimeError):
    """The service stated no date (no `Date` header, no events) and none was configured."""


def _newest_event_time(events: Iterable[Record | None]) -> datetime | None:
    times = [t for e in events if e for t in [event_time(e.get("eventDate"))] if t is not None]
    return max(times).replace(tzinfo=UTC) if times else None


def _header_time(service: Any) -> datetime | None:
    clock = getattr(getattr(service, "client", None), "clock", None)
    now = getattr(clock, "now", None)
    return now() if callable(now) else None


async def service_time(
    service: Any, events: Iterable[Record | None] = ()
) -> tuple[datetime, str] | None:
    """The service's current time (UTC) and where it was read; None when it states none."""
    seen = _header_time(service)
    if seen is not None:
        return seen, FROM_HEADER
    newest = None
    latest = getattr(service, "latest_event", None)
    if latest is not None:
        newest = await latest()  # one small request; its response carries a Date header
        seen = _header_time(service)
        if seen is not None:
            return seen, FROM_HEADER
    when = _newest_event_time([*events, newest])
    return (when, FROM_EVENT) if when is not None else None


async def settle(
    service: Any, settings: IngestSettings, events: Iterable[Record | None] = ()
) -> tuple[IngestSettings, AsOf]:
    """`settings` with the business date set (the override, else the service's date)."""
    if settings.today is not None:
        return settings, AsOf(settings.today, None, FROM_OVERRIDE)
    found = await service_time(service, events)
    if found is None:
        raise ServiceDateUnknown(
            "the service stated no date (no Date header on its responses, no events), so the "
            "run cannot tell which business day it is; set the date explicitly (the lake "
            "resource's availability_start) or check the service URL"
        )
    moment, source = found
    as_of = AsOf(moment.date(), moment, source)
    return replace(settings, today=as_of.business_date), as_of


async def settle_run(run: DatedRun, events: Iterable[Record | None] = ()) -> AsOf:
    """Fix the business date of an open run (its settings and report) from its service."""
    run.settings, as_of = await settle(run.service, run.settings, events)
    run.report.as_of = as_of
    return as_of


def resolve_business_date(
    open_client: OpenClient, settings: IngestSettings
) -> tuple[IngestSettings, AsOf]:
    """For a run with no client open yet (the full extract): the override, else one request."""
    if settings.today is not None:
        return settings, AsOf(settings.today, None, FROM_OVERRIDE)

    async def main() -> tuple[IngestSettings, AsOf]:
        async with open_client() as service:
            return await settle(service, settings)

    result: tuple[IngestSettings, AsOf] = run_sync(main)
    return result
