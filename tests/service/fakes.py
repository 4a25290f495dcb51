"""An in-memory stand-in for the service, served through httpx.MockTransport (no network).

It implements just enough of docs/contracts.md for the client's unit tests: authenticate, paged
lists with the envelope, `filter` (`>`, `>:`, `<`, `<:`, `:`, `:[..]`, OR chains, repeated = AND),
`sort=id,asc|desc`, size clamping, 204 on empty lists, and scripted failures per request.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import httpx

from service.config import ServiceConfig

BASE = "https://api.example.test/service/v2"
CLIENT_ID = "reservoir-test"
SECRET = "s3cr3t-PLEASE-NEVER-LOG-ME"

_TERM = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)(::|!:|>:|<:|:|>|<)(.*)$")

Script = Callable[[httpx.Request], "httpx.Response | None"]


def make_config(**overrides: Any) -> ServiceConfig:
    settings: dict[str, Any] = {
        "base_url": BASE,
        "client_id": CLIENT_ID,
        "client_secret": SECRET,
        "scope": "TST",
        "page_size": 10,
        "max_retries": 4,
        "max_retry_seconds": 30.0,
        "timeout": 5.0,
    }
    settings.update(overrides)
    return ServiceConfig(**settings)


def _match(record: dict[str, Any], term: str) -> bool:
    m = _TERM.match(term)
    if not m:
        raise ValueError(term)
    name, op, raw = m.groups()
    value = record.get(name)
    if raw.startswith("[") and op == ":":
        wanted = {x for x in raw[1:-1].split(",") if x}
        return str(value) in wanted
    if isinstance(value, int):
        other: Any = int(raw)
    else:
        other = raw
        value = "" if value is None else str(value)
    return {
        ":": lambda: value == other if isinstance(value, int) else str(other) in value,
        "::": lambda: value == other,
        "!:": lambda: value != other,
        ">": lambda: value > other,
        ">:": lambda: value >= other,
        "<": lambda: value < other,
        "<:": lambda: value <= other,
    }[op]()


@dataclass
class FakeService:
    """Collections of records keyed by path; counters of what was asked."""

    lists: dict[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)
    max_size: int = 1000
    expires_in: int = 3600
    null_totals: bool = False
    no_content_when_empty: bool = True
    scripts: list[Script] = field(default_factory=list)
    before_page: Callable[[str], None] | None = None
    latency: float = 0.0
    tokens_issued: int = 0
    valid_tokens: set[str] = field(default_factory=set)
    requests: list[httpx.Request] = field(default_factory=list)
    auth_forms: list[dict[str, str]] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    paths: Counter[str] = field(default_factory=Counter)

    def add_list(self, path: str, id_field: str, records: list[dict[str, Any]]) -> None:
        self.lists[path] = (id_field, records)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def revoke_tokens(self) -> None:
        self.valid_tokens.clear()

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
            return self._handle(request)
        finally:
            self.in_flight -= 1

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        for script in list(self.scripts):
            answer = script(request)
            if answer is not None:
                return answer
        path = request.url.path.removeprefix("/service/v2")
        self.paths[path] += 1
        if path == "/authenticate":
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            self.auth_forms.append(form)
            secret = form.get("clientSecret", form.get("client_secret"))
            cid = form.get("clientId", form.get("client_id"))
            if secret != SECRET or cid != CLIENT_ID:
                return _error(401, "UNAUTHORIZED", "bad credentials")
            self.tokens_issued += 1
            token = f"tok-{self.tokens_issued}-abcdefgh"
            self.valid_tokens.add(token)
            return httpx.Response(
                200,
                json={
                    "access_token": token,
                    "token_type": "bearer",
                    "expires_in": self.expires_in,
                    "scope": "TST",
                    "jti": "x",
                    "client_id": 42,
                    "concern_id": 7,
                    "details": {},
                },
            )
        auth = request.headers.get("authorization", "")
        if not auth.startswith("Bearer ") or auth.split(" ", 1)[1] not in self.valid_tokens:
            return _error(401, "UNAUTHORIZED", "token expired")
        if path not in self.lists:
            return _error(404, "NOT_FOUND", f"no such path {path}")
        if self.before_page is not None:
            self.before_page(path)
        return self._page(request, path)

    def _page(self, request: httpx.Request, path: str) -> httpx.Response:
        _, records = self.lists[path]
        params = request.url.params
        selected = list(records)
        for term in params.get_list("filter"):
            parts = term.split("||")
            selected = [r for r in selected if any(_match(r, p) for p in parts)]
        sort = params.get("sort")
        if sort:
            field_, _, direction = sort.partition(",")
            selected.sort(key=lambda r: r[field_], reverse=direction == "desc")
        size = min(int(params.get("size", 20)), self.max_size)
        page = int(params.get("page", 0))
        content = selected[page * size : (page + 1) * size]
        total = len(selected)
        if not content and self.no_content_when_empty:
            return httpx.Response(204)
        pages = (total + size - 1) // size
        body = {
            "content": content,
            "size": size,
            "number": page,
            "numberOfElements": len(content),
            "totalElements": None if self.null_totals else total,
            "totalPages": None if self.null_totals else pages,
            "first": page == 0,
            "last": None if self.null_totals else page >= pages - 1,
            "empty": not content,
        }
        return httpx.Response(200, json=body)

    def data_requests(self, path: str) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path.endswith(path)]


def _error(
    status: int, error: str, message: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.Response(
        status,
        headers=headers,
        json={"status": status, "error": error, "code": error, "message": message},
    )


def fail_times(
    times: int, answer: Callable[[httpx.Request], httpx.Response], path_suffix: str = ""
) -> Script:
    """A script that answers the first `times` matching data requests with `answer`."""
    left = [times]

    def script(request: httpx.Request) -> httpx.Response | None:
        if left[0] <= 0 or request.url.path.endswith("/authenticate"):
            return None
        if path_suffix and not request.url.path.endswith(path_suffix):
            return None
        left[0] -= 1
        return answer(request)

    return script


def records(id_field: str, ids: list[int], **extra: Any) -> list[dict[str, Any]]:
    return [{id_field: i, "name": f"n{i}", **extra} for i in ids]


def body_json(response: httpx.Response) -> Any:
    return json.loads(response.content)
