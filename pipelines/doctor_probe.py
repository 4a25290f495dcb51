"""How `reservoir doctor` asks one catalogue endpoint (`Prober`): its smallest answer, then with
the id of its first record the keyset filter, the id-list filter of the event refresh, each
`returnSections` alone and a page of the pipeline's size; what it answered is an `EndpointProbe`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from assets.endpoints import EndpointSpec
from service.api import RESERVATION_SECTIONS
from service.errors import NotFound, ServiceError, ServiceUnavailable
from service.filters import F

ALTERNATE_PATHS = {  # another spelling the client accepts too (service.api)
    "/accommodationtypes/{resourceId}/rates": "/accommodationtype/{resourceId}/rates",
}
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass
class EndpointProbe:
    """What one catalogue endpoint answered."""

    stream: str
    endpoint: str  # "GET <path>" as the catalogue names it
    reachable: bool | None = None  # None: not asked (see `skipped`)
    status: int | None = None
    latency_ms: float | None = None
    records: int | None = None  # records in the smallest answer (0: the service has none)
    sections: dict[str, str] = field(default_factory=dict)  # returnSections value -> verdict
    filters: dict[str, str] = field(default_factory=dict)  # filter -> "ok" or what went wrong
    page_size_asked: int | None = None
    page_size: int | None = None  # the size the service reported for a page of that size
    problem: str | None = None  # why the pipeline cannot read it (one line)
    skipped: str | None = None  # why it was not asked
    notes: list[str] = field(default_factory=list)


def sections_asked(spec: EndpointSpec) -> tuple[str, ...]:
    """The `returnSections` values the client sends for a stream (none for most)."""
    if spec.method == "reservation_details":
        return RESERVATION_SECTIONS
    if spec.by_ids and "returnSections" in spec.by_ids.params:
        return tuple(str(spec.by_ids.params["returnSections"]).split(","))
    return ()


def keyset_field(spec: EndpointSpec, events_path: str = "/events") -> str | None:
    """The id field the client pages the stream by (None: not a keyset list)."""
    if spec.window:
        return None
    if spec.method == "events" or spec.source == events_path:
        return "eventId"
    keys = [c.source for c in spec.table.columns if c.column in spec.table.key]
    return spec.list_key or (keys[0] if len(keys) == 1 else None)


def _records(body: Any) -> list[dict[str, Any]]:
    if isinstance(body, dict):
        body = body.get("content", [body])
    return [r for r in body or [] if isinstance(r, dict)] if isinstance(body, list) else []


def _short(exc: Exception) -> str:
    return str(exc).split(". Check client id", 1)[0]


def _said(exc: ServiceError) -> str:
    """`HTTP <status>: <what the service said>` for a table cell."""
    said = getattr(exc, "server_message", None) or _short(exc)
    return f"HTTP {exc.status}: {said}" if exc.status else said


class Prober:
    """Asks the endpoints through one client; remembers each stream's first record."""

    def __init__(self, client: Any, today: date) -> None:
        self.client = client
        self.today = today
        self.first: dict[str, dict[str, Any]] = {}
        self.events_path = client.config.events_path

    async def get(self, path: str, params: dict[str, Any], template: str) -> tuple[int, Any, float]:
        started = time.perf_counter()
        body = await self.client.get_json(path, params=params, template=template)
        return (204 if body is None else 200), body, (time.perf_counter() - started) * 1000

    def value(self, name: str, among: Sequence[str]) -> Any:
        """`name` of the first record of the first stream in `among` that has it."""
        for stream in among or list(self.first):
            record = self.first.get(stream) or {}
            if isinstance(record.get(name), int):
                return record[name]
        return None

    async def probe_all(self, specs: Sequence[EndpointSpec]) -> list[EndpointProbe]:
        """Lists first, then what needs one of their ids (entries of a report, rates, ...).

        One request at a time, so that each latency is the service's, not a queue's."""
        later = [s for s in specs if _PLACEHOLDER.search(s.source) or s.window]
        first = [s for s in specs if s.name not in {x.name for x in later}]
        done = {s.name: await self.probe(s) for s in first}
        done.update({s.name: await self.probe(s) for s in later})
        return [done[s.name] for s in specs]

    async def probe(self, spec: EndpointSpec) -> EndpointProbe:
        result = EndpointProbe(spec.name, f"GET {spec.source}")
        source = self.events_path if spec.method == "events" else spec.source
        path, params = self._request(spec, source, result)
        if path is None:
            return result
        key = keyset_field(spec, self.events_path)
        small = {**params, "size": 1, "page": 0, "sort": f"{key},asc"} if key else dict(params)
        started = time.perf_counter()
        try:
            status, body, ms = await self._first_answer(spec, path, small, result)
        except ServiceError as exc:
            result.latency_ms = round((time.perf_counter() - started) * 1000, 1)
            result.status = exc.status
            result.reachable = not (isinstance(exc, ServiceUnavailable) and exc.status is None)
            result.problem = _short(exc)
        else:
            records = _records(body)
            result.reachable, result.status, result.latency_ms = True, status, round(ms, 1)
            result.records = len(records)
            if records:
                self.first[spec.name] = records[0]
        if result.reachable:
            await self._sections(spec, path, params, result)
        if key and spec.name in self.first and result.problem is None:
            await self._filters(spec, path, params, key, result)
            await self._page_size(spec, path, params, key, result)
        return result

    def _request(
        self, spec: EndpointSpec, source: str, result: EndpointProbe
    ) -> tuple[str | None, dict[str, Any]]:
        params: dict[str, Any] = {}
        if sections := sections_asked(spec):
            params["returnSections"] = ",".join(sections)
        if spec.window:  # one arrival day of one accommodation type
            day = self.today.isoformat()
            params.update(arrivalDateFrom=day, arrivalDateTo=day)
            resource_id = self.value("resourceId", ("accommodation_types",))
            if resource_id is not None:
                params["resourceId"] = resource_id
        path = source
        for name in _PLACEHOLDER.findall(source):
            value = self.value(name, spec.deps)
            if value is None:
                parents = ", ".join(spec.deps) or "its parent list"
                result.skipped = f"not asked: {parents} has no record to take {name} from"
                return None, params
            path = path.replace("{" + name + "}", str(value))
        return path, params

    async def _first_answer(
        self, spec: EndpointSpec, path: str, params: dict[str, Any], result: EndpointProbe
    ) -> tuple[int, Any, float]:
        try:
            return await self.get(path, params, spec.source)
        except NotFound:
            alternate = ALTERNATE_PATHS.get(spec.source)
            if alternate is None:
                raise
            tail = path.removeprefix(spec.source.split("{", 1)[0])
            answer = await self.get(alternate.split("{", 1)[0] + tail, params, alternate)
            result.notes.append(f"answered on {alternate}")
            return answer

    async def _sections(
        self, spec: EndpointSpec, path: str, params: dict[str, Any], result: EndpointProbe
    ) -> None:
        fields = {s.field.upper(): s.field for s in spec.sections}
        for section in sections_asked(spec):
            one = {**params, "returnSections": section, "size": 1, "page": 0}
            try:
                _, body, _ = await self.get(path, one, spec.source)
            except ServiceError as exc:
                result.sections[section] = f"refused ({_said(exc)})"
                continue
            records = _records(body)
            wire = fields.get(section)
            if records and wire and wire not in records[0]:
                result.sections[section] = f"accepted, but the answer has no {wire}"
            else:
                result.sections[section] = "accepted"

    async def _filters(
        self, spec: EndpointSpec, path: str, params: dict[str, Any], key: str, result: EndpointProbe
    ) -> None:
        first = self.first[spec.name]
        low = first.get(key)
        checks: list[tuple[str, dict[str, Any], str, Any]] = []
        if isinstance(low, int):
            term = (F(key) > low).render()
            checks.append((f"{key}>", {"filter": [term], "sort": f"{key},desc"}, ">", low))
        how = spec.by_ids
        if how and not spec.type_scoped and isinstance(first.get(how.id_field), int):
            wanted = first[how.id_field]
            if how.method == "reservation_details":
                checks.append(("reservationIds", {"reservationIds": wanted}, "=", wanted))
            else:
                term = F(how.id_field).isin([wanted]).render()
                checks.append((f"{how.id_field}:[..]", {"filter": [term]}, "=", wanted))
        for name, extra, op, value in checks:
            field_ = key if op == ">" else (how.id_field if how else key)
            try:
                _, body, _ = await self.get(path, {**params, **extra, "size": 1}, spec.source)
            except ServiceError as exc:
                result.filters[name] = f"refused (HTTP {exc.status})"
                continue
            got = [r.get(field_) for r in _records(body)]
            if op == ">":
                honoured = all(isinstance(g, int) and g > value for g in got)
            else:
                honoured = bool(got) and all(g == value for g in got)
            result.filters[name] = "ok" if honoured else "ignored"

    async def _page_size(
        self, spec: EndpointSpec, path: str, params: dict[str, Any], key: str, result: EndpointProbe
    ) -> None:
        config = self.client.config
        asked = config.details_size if spec.method == "reservation_details" else config.page_size
        result.page_size_asked = asked
        page = {**params, "size": asked, "page": 0, "sort": f"{key},asc"}
        try:
            _, body, _ = await self.get(path, page, spec.source)
        except ServiceError as exc:
            result.notes.append(f"a page of {asked} was refused: {_short(exc)}")
            return
        size = body.get("size") if isinstance(body, dict) else None
        result.page_size = size if isinstance(size, int) else None
