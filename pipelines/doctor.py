"""`reservoir doctor`: can the pipeline read this service? Asked with the smallest requests.

It authenticates, asks every catalogue endpoint (`assets.catalogue.SPECS`) for one record and,
with its id, tries what the pipeline relies on: the keyset filter (`id>x`, sorted), the id-list
filter of the event refresh, each `returnSections` the client asks for (alone, so a refused one
is named), and a page of the pipeline's size (the `size` reported back is the service's cap).
It says which lake tables would be empty or degraded and why, and today's request budget; about
60 requests. Exit rule: 0 when authentication works and every endpoint, filter and section the
pipeline uses is accepted (a list without records is fine: its table is just empty), else 1.

Here: what the answers mean for the lake tables (`outlooks`), the budget and the report; asking
one endpoint is `pipelines.doctor_probe`, showing the report `pipelines.doctor_report`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from assets.catalogue import SPECS
from assets.endpoints import EndpointSpec, refused_area
from pipelines.doctor_probe import EndpointProbe, Prober
from pipelines.settings import Settings
from service.errors import ServiceError, ServiceUnavailable

PROBE_RETRIES = 2  # like `reservoir run`'s preflight: a verdict in seconds, not minutes
PROBE_TIMEOUT_SECONDS = 10.0
NO_ANSWER = "check RESERVOIR_BASE_URL and that the host is reachable from here"


@dataclass
class TableOutlook:
    """A lake table that will be empty or degraded."""

    table: str
    outlook: str  # "empty" or "degraded"
    why: str
    blocking: bool  # the pipeline does not work as built (exit code 1)


@dataclass
class DoctorReport:
    service: str
    client_id: str
    scope: str
    authenticated: bool = False
    authentication: str = ""  # the token's lifetime and latency, or why it failed
    endpoints: list[EndpointProbe] = field(default_factory=list)
    tables: list[TableOutlook] = field(default_factory=list)
    budget: dict[str, Any] = field(default_factory=dict)
    # optional areas the credentials do not cover: area -> what was refused and what to ask for
    # (a warning: a run lands the rest; `assets.areas`)
    refused_areas: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.authenticated and not any(t.blocking for t in self.tables)


def outlooks(spec: EndpointSpec, probe: EndpointProbe) -> list[TableOutlook]:
    """The lake tables of one stream that will be empty or degraded, most serious reason first."""
    found: dict[str, TableOutlook] = {}
    tables = [t.name for t in spec.tables]

    def put(names: Sequence[str], outlook: str, why: str, blocking: bool) -> None:
        for name in names:
            found.setdefault(name, TableOutlook(name, outlook, why, blocking))

    by_section = {s.field.upper(): s for s in spec.sections}
    refused = {s: v for s, v in probe.sections.items() if v.startswith("refused")}
    for section, verdict in refused.items():
        if (target := by_section.get(section)) is None:
            continue
        feeders = [s for s, o in by_section.items() if o.table.name == target.table.name]
        # another spelling of the same section (subjects / reservationSubjects) adds nothing
        others = [s for s in feeders if by_section[s].constants != target.constants]
        partial = any(s not in refused for s in others)
        payer = target.constants.get("payerType")
        what = f"no {payer} lines" if partial and payer else "nothing"
        outlook = "degraded" if partial else "empty"
        put([target.table.name], outlook, f"{what}: section {section} {verdict}", True)
    area = refused_area(spec, probe.status) if probe.problem is not None else None
    if area is not None:
        name, optional, what = area
        if optional:
            why = f"optional area {name} refused: {probe.problem}; {what}. A run lands the rest "
            put(tables, "not read", why + "and keeps what the lake has of it", False)
        else:
            why = f"core area {name} refused: {probe.problem}; {what}. The marts need it"
            put(tables, "empty", why, True)
    elif probe.problem is not None:
        also = f" (refused sections: {', '.join(refused)}; all are asked in one request)"
        put(tables, "empty", probe.problem + (also if refused else ""), True)
    if probe.skipped is not None:
        put(tables, "empty", probe.skipped, False)
    for name, verdict in probe.filters.items():
        if verdict != "ok" and name.endswith(">"):
            why = f"the keyset filter {name} is {verdict}: the full read cannot page"
            put(tables, "empty", why, True)
        elif verdict != "ok":
            why = f"the id filter {name} is {verdict}: refreshes from the event feed fail"
            put(tables, "degraded", why, True)
    if probe.records == 0:
        put(tables, "empty", f"the service has no records (HTTP {probe.status})", False)
    for section, verdict in probe.sections.items():
        if section in by_section and verdict.startswith("accepted, but"):
            why = f"section {section} {verdict} (in a sample of one)"
            put([by_section[section].table.name], "degraded", why, False)
    return list(found.values())


def budget(settings: Settings, stats: Any, sandbox: bool) -> dict[str, Any]:
    """Today's request budget: earlier runs, this check, the free quota, one run's limit."""
    projection = stats.projection()
    return {
        "used_today_by_runs": projection["used_today"],
        "used_by_doctor": projection["this_run"],
        "daily_free": projection["daily_free"],
        "free_left_today": projection["free_remaining"],
        "max_requests_per_run": settings.max_requests,
        "charged": not sandbox,
    }


def diagnose(
    settings: Settings,
    *,
    target: Any = None,
    transport: Any = None,
    scale: str = "small",
    seed: int = 7,
) -> DoctorReport:
    """Check the configured service (or the embedded sandbox, started as `reservoir run` does)."""
    import stamina.instrumentation

    from pipelines.target import service_target
    from service.sync import run

    stamina.instrumentation.set_on_retry_hooks([])  # no retry lines in the table or the JSON
    with contextlib.ExitStack() as stack:
        if target is None:
            target = stack.enter_context(service_target(settings, scale=scale, seed=seed))
        return run(_diagnose(settings, target, transport))


async def _diagnose(settings: Settings, target: Any, transport: Any) -> DoctorReport:
    from pipelines.status import requests_used_today
    from service.api import ReservationService

    report = DoctorReport(target.source, target.client_id, target.scope)
    try:
        config = target.client_config(
            settings,
            max_retries=PROBE_RETRIES,
            max_retry_seconds=PROBE_TIMEOUT_SECONDS,
            timeout=PROBE_TIMEOUT_SECONDS,
            show_archived=True,  # as the pipeline's resource asks
        )
    except ServiceError as exc:
        report.authentication = str(exc)
        return report
    used = requests_used_today(settings)
    async with ReservationService.connect(config, transport=transport, used_today=used) as service:
        client = service.client
        started = time.perf_counter()
        try:
            await client.auth.header()
        except ServiceUnavailable as exc:
            hint = NO_ANSWER if exc.status is None else "it answers but keeps failing: try later"
            report.authentication = f"{exc}; {hint}"
        except ServiceError as exc:
            report.authentication = str(exc)
        else:
            ms = (time.perf_counter() - started) * 1000
            token = client.auth.token
            lifetime = f"a token for {token.expires_in} s" if token else "a token"
            report.authenticated = True
            report.authentication = f"{lifetime} in {ms:.0f} ms"
            today = date.fromisoformat(target.today) if target.today else datetime.now(UTC).date()
            report.endpoints = await Prober(client, today).probe_all(SPECS)
            for spec, probe in zip(SPECS, report.endpoints, strict=True):
                report.tables.extend(outlooks(spec, probe))
                area = refused_area(spec, probe.status) if probe.problem else None
                if area is not None and area[1]:
                    report.refused_areas.setdefault(
                        area[0], f"{probe.endpoint} refused (HTTP {probe.status}); {area[2]}"
                    )
        report.budget = budget(settings, client.stats, target.sandbox is not None)
    return report
