"""The sandbox's HTTP layer: the service's REST interface over a `World` (sandbox/protocol.py).

`create_app(world, settings)` returns a Starlette app. Everything the real service does at the
edge lives here: OAuth2 tokens, the page envelope, filters and sorts, 204 on empty lists, the
per-address concurrency cap (429), latency, opt-in faults and request statistics. The world only
answers "which records exist now".

Request path for `/service/v2/...`, in `ServiceGate` (pure ASGI middleware, so it can count
in-flight requests before routing and break responses on purpose):
throttle -> latency -> faults (429/5xx) -> token check -> slow -> handler -> drop/truncate.
Handlers do their work in the thread pool under `world.lock`, because a scan over 1.5M records
must not stall the event loop (which would also stall every other request's latency sleep).
List pages use a thread of their own (see `Service.__init__`).
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.auth import AuthError, Credentials, TokenStore
from sandbox.encode import DEFAULT_CACHE_BYTES, RecordCache, page_bytes
from sandbox.faults import FAULT_NAMES, NO_FAULTS, FaultDecision, Faults, malform, truncate
from sandbox.openapi import Endpoint, Param, build_openapi, template
from sandbox.protocol import COLLECTIONS, Record, World, WorldError
from sandbox.query import (
    INT,
    LIVE_OP,
    UNKNOWN,
    Condition,
    Filters,
    QueryError,
    build_predicate,
    compile_filters,
    envelope,
    infer_types,
    parse_paging,
    parse_sort,
    plan_keys,
    select,
    select_keyed,
)

if TYPE_CHECKING:
    from sandbox.runner import SandboxSettings

SERVICE_PREFIX = "/service/v2"
ADMIN_PREFIX = "/_admin"
AUTHENTICATE_PATH = SERVICE_PREFIX + "/authenticate"
MAX_ARRIVAL_DAYS = 31
PAYER_TYPES = ("CUSTOMER", "PAYING_CUSTOMER", "AGENT")
# returnSections value -> (payerType, field of the details record)
BILL_SECTIONS = {
    "CUSTOMERBILL": ("CUSTOMER", "customerBill"),
    "PAYINGCUSTOMERBILL": ("PAYING_CUSTOMER", "payingCustomerBill"),
    "AGENTBILL": ("AGENT", "agentBill"),
}
RESERVATION_SECTIONS = (
    "RESERVEDRESOURCES",
    "CUSTOMERBILL",
    "PAYINGCUSTOMERBILL",
    "AGENTBILL",
    "SUBJECTS",
)
ACCOMMODATION_SECTIONS = ("CAPACITIES",)
ERROR_NAMES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    429: "TOO_MANY_REQUESTS",
    500: "INTERNAL_SERVER_ERROR",
    502: "BAD_GATEWAY",
    503: "SERVICE_UNAVAILABLE",
}
_JSON = "application/json"
TEMPLATE_CACHE_SIZE = 8192
# flat lists the pipeline reads in a full run (plus accommodation types and reservation details)
WARM_COLLECTIONS = (
    "distributionchannels",
    "locations",
    "units",
    "ratetypes",
    "rateoptions",
    "rates",
    "companies",
    "journalreports",
    "journalentries",
    "cashaccounts",
    "cashclearances",
    "customers",
    "events",
)


@dataclass(frozen=True)
class View:
    """How one request serves a record: `build` gives the record as served (the decode path,
    used by faults that damage records), `encode` its JSON bytes; `variant` names the cache
    namespace (two views with the same variant must encode a record identically)."""

    variant: str
    build: Callable[[Record], Record]
    encode: Callable[[Record], bytes]
    encode_many: Callable[[Sequence[Record]], Sequence[bytes]] | None = None  # a page at once


def _identity(record: Record) -> Record:
    return record


def _encode_plain(records: Sequence[Record]) -> Sequence[bytes]:
    """`[orjson.dumps(r) for r in records]`; a lazy page of frozen records is encoded from the
    world's columns without building dicts (same bytes)."""
    encode = getattr(records, "encode", None)
    encoded = encode() if encode is not None else None
    if encoded is not None:
        return encoded
    return [orjson.dumps(record) for record in records]


def plain_view(collection: str, *, from_columns: bool = True) -> View:
    """A record served as it is; `from_columns`: pages of frozen records are encoded straight
    from the world's columns (else each record is rendered and given to orjson)."""
    return View(collection, _identity, orjson.dumps, _encode_plain if from_columns else None)


class ApiError(Exception):
    """An error answer with the contracts.md body `{status, error, code, message}`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def error_body(status: int, code: str, message: str) -> bytes:
    error = ERROR_NAMES.get(status, "ERROR")
    return orjson.dumps({"status": status, "error": error, "code": code, "message": message})


def error_response(status: int, code: str, message: str) -> Response:
    headers = {"Retry-After": "1"} if status in (429, 503) else None
    return Response(error_body(status, code, message), status, headers, media_type=_JSON)


def json_response(data: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status, media_type=_JSON)


class Stats:
    """Request counters for `/_admin/stats`; mutated on the event loop, read from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.in_flight_by_client: Counter[str] = Counter()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.started = time.time()
            self.requests = 0
            self.throttled = 0
            self.endpoints: Counter[str] = Counter()
            self.statuses: Counter[int] = Counter()
            self.endpoint_statuses: dict[str, Counter[int]] = {}
            self.peak_in_flight = self.in_flight
            self.peak_in_flight_per_client = max(self.in_flight_by_client.values(), default=0)

    def enter(self, client: str) -> None:
        with self._lock:
            self.in_flight += 1
            self.in_flight_by_client[client] += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self.peak_in_flight_per_client = max(
                self.peak_in_flight_per_client, self.in_flight_by_client[client]
            )

    def leave(self, client: str) -> None:
        with self._lock:
            self.in_flight -= 1
            self.in_flight_by_client[client] -= 1
            if self.in_flight_by_client[client] <= 0:
                del self.in_flight_by_client[client]

    def record(self, endpoint: str, status: int, *, throttled: bool = False) -> None:
        with self._lock:
            self.requests += 1
            self.throttled += throttled
            self.endpoints[endpoint] += 1
            self.statuses[status] += 1
            self.endpoint_statuses.setdefault(endpoint, Counter())[status] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {
                "since": self.started,
                "requests": self.requests,
                "throttled": self.throttled,
                "endpoints": dict(self.endpoints),
                "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
                "endpointStatuses": {
                    e: {str(k): v for k, v in sorted(c.items())}
                    for e, c in self.endpoint_statuses.items()
                },
                "inFlight": self.in_flight,
                "peakInFlight": self.peak_in_flight,
                "peakInFlightPerClient": self.peak_in_flight_per_client,
            }


class _AnyField(dict):  # type: ignore[type-arg]
    """Field types of an empty collection: every name is accepted (nothing can match anyway)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return UNKNOWN

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return dict.get(self, key, UNKNOWN)


def _ids(values: Sequence[str], name: str) -> list[int]:
    """`1,2,3`, `[1,2]` or repeated parameters -> ints (400 on anything else)."""
    out: list[int] = []
    for value in values:
        for item in value.strip().strip("[]").split(","):
            if item.strip():
                try:
                    out.append(int(item))
                except ValueError:
                    raise ApiError(400, "INVALID_PARAMETER", f"{name} must be integers") from None
    return out


def _sections(request: Request, allowed: Sequence[str]) -> set[str]:
    values = request.query_params.getlist("returnSections")
    if not values:
        return set(allowed)
    sections = {s.strip().upper() for v in values for s in v.split(",") if s.strip()}
    unknown = sections - set(allowed)
    if unknown:
        raise ApiError(
            400,
            "INVALID_PARAMETER",
            f"unknown returnSections {sorted(unknown)}; allowed: {list(allowed)}",
        )
    return sections


def _date(value: Any, name: str) -> date:
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ApiError(400, "INVALID_PARAMETER", f"{name} must be a date (yyyy-MM-dd)") from None


def _int(value: Any, name: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ApiError(400, "INVALID_PARAMETER", f"{name} must be an integer") from None


def _int_list(value: Any, name: str) -> list[int] | None:
    if value in (None, "", []):
        return None
    if isinstance(value, list):
        return [v for v in (_int(v, name) for v in value) if v is not None]
    return _ids([str(value)], name)


class Service:
    """Handlers and shared state of one sandbox app."""

    def __init__(self, world: World, settings: SandboxSettings) -> None:
        self.world = world
        self.settings = settings
        credentials = Credentials(
            settings.client_id, settings.client_secret, settings.scope, settings.concern_id
        )
        self.tokens = TokenStore(credentials, ttl=settings.token_ttl)
        seed = settings.seed if settings.fault_seed is None else settings.fault_seed
        self.faults = Faults(
            settings.faults,
            seed=seed,
            slow_seconds=settings.slow_seconds,
            malformed_fraction=settings.malformed_fraction,
        )
        self.stats = Stats()
        self.cache = RecordCache(getattr(settings, "encode_cache_bytes", DEFAULT_CACHE_BYTES))
        # List pages are built in one thread of their own: they take the world's lock anyway,
        # and a cold read's encoding then reuses one thread's malloc and Arrow heaps instead of
        # growing (and page-faulting in) a heap per pool thread, which cost ~1 s of kernel time
        # per medium full read.
        self._pages = ThreadPoolExecutor(1, thread_name_prefix="sandbox-pages")
        # encode frozen records from the world's columns (same bytes as rendering them)
        self.from_columns = getattr(settings, "encode_from_columns", True)
        self._types: dict[str, dict[str, str]] = {}
        self._templates: dict[tuple[str, str], str] = {}
        self.endpoints = self._endpoints()
        self.routes: list[Route] = [
            Route(SERVICE_PREFIX + e.path, e.handler, methods=[e.method]) for e in self.endpoints
        ] + [
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route(ADMIN_PREFIX + "/health", self.admin_health, methods=["GET"]),
            Route(ADMIN_PREFIX + "/stats", self.admin_stats, methods=["GET"]),
            Route(ADMIN_PREFIX + "/stats/reset", self.admin_stats_reset, methods=["POST"]),
            Route(ADMIN_PREFIX + "/advance", self.admin_advance, methods=["POST"]),
            Route(ADMIN_PREFIX + "/faults", self.admin_faults, methods=["GET", "POST"]),
        ]

    # -- route table --------------------------------------------------------------------------

    def _endpoints(self) -> list[Endpoint]:
        """The served interface as data; static paths precede `{id}` paths on purpose."""
        ids = Param(
            "reservationIds",
            "integer",
            list=True,
            description="comma-separated or repeated reservation ids",
        )
        sections = Param("returnSections", "string", list=True)
        payer = Param("payerType", "string", description="CUSTOMER | PAYING_CUSTOMER | AGENT")
        avail = tuple(
            Param(n, t)
            for n, t in (
                ("arrivalDateFrom", "string"),
                ("arrivalDateTo", "string"),
                ("resourceId", "integer"),
                ("duration", "integer"),
                ("distributionChannelCode", "string"),
                ("rateTypeId", "integer"),
                ("locationId", "integer"),
            )
        )
        res_params = (
            ids,
            Param("distributionChannelCode"),
            Param("resourceId", "integer"),
            Param("unitId", "integer"),
        )

        def page(path: str, collection: str, summary: str, **kw: Any) -> Endpoint:
            handler = self._page_handler(
                collection,
                **{k: v for k, v in kw.items() if k in ("no_content", "extra", "view", "source")},
            )
            return Endpoint(
                "GET",
                path,
                handler,
                "page",
                collection,
                summary,
                params=kw.get("params", ()),
                no_content_when_empty=kw.get("no_content", False),
            )

        def item(
            path: str,
            collection: str,
            summary: str,
            view: Callable[[Request], View] | None = None,
            params: tuple[Param, ...] = (),
        ) -> Endpoint:
            return Endpoint(
                "GET",
                path,
                self._item_handler(collection, view),
                "item",
                collection,
                summary,
                params=params,
            )

        def children(parent_param: str, child: str) -> Callable[[Request], Sequence[Record]]:
            # a world that can (beyond the protocol) gives a lazy view with its keys
            view = getattr(self.world, "child_view", None)
            get = view if view is not None else self.world.children
            return lambda request: get(child, request.path_params[parent_param])

        rates = children("resourceId", "rates")
        return [
            Endpoint(
                "POST",
                "/authenticate",
                self.authenticate,
                "token",
                None,
                "OAuth2 client credentials (form-encoded)",
            ),
            page(
                "/distributionchannels",
                "distributionchannels",
                "Distribution channels",
                no_content=True,
            ),
            item(
                "/distributionchannels/{distributionChannelId:int}",
                "distributionchannels",
                "One distribution channel",
            ),
            page("/locations", "locations", "Locations"),
            item("/locations/{locationId:int}", "locations", "One location"),
            page(
                "/accommodationtypes",
                "accommodationtypes",
                "Accommodation types",
                extra=self._accotype_filters,
                view=self._accotype_plain,
                params=(Param("resourceIds", "integer", list=True),),
            ),
            page(
                "/accommodationtypes/details",
                "accommodationtypes",
                "Accommodation types with details",
                extra=self._accotype_filters,
                view=self._accotype_details,
                params=(sections,),
            ),
            Endpoint(
                "GET",
                "/accommodationtypes/availability",
                self.availability_get,
                "array",
                None,
                "Availability (at most 31 arrival dates)",
                params=avail,
            ),
            Endpoint(
                "POST",
                "/accommodationtypes/availability",
                self.availability_post,
                "array",
                None,
                "Availability, parameters in a JSON body",
                body=True,
            ),
            item(
                "/accommodationtypes/{resourceId:int}",
                "accommodationtypes",
                "One accommodation type",
                view=self._accotype_plain,
            ),
            item(
                "/accommodationtypes/{resourceId:int}/details",
                "accommodationtypes",
                "One accommodation type with details",
                view=self._accotype_details,
                params=(sections,),
            ),
            page(
                "/accommodationtypes/{resourceId:int}/rates",
                "rates",
                "Rates of a type",
                source=rates,
            ),
            page(
                "/accommodationtype/{resourceId:int}/rates",
                "rates",
                "Rates of a type (singular path named by the event section)",
                source=rates,
            ),
            page("/units", "units", "Units"),
            item("/units/{unitId:int}", "units", "One unit"),
            page(
                "/ratetypes",
                "ratetypes",
                "Rate types",
                extra=self._ratetype_filters,
                params=(Param("distributionChannelCode"),),
            ),
            page("/ratetypes/rateoptions", "rateoptions", "Rate options"),
            page(
                "/ratetypes/{rateTypeId:int}/rateoptions",
                "rateoptions",
                "Rate options of a rate type",
                source=children("rateTypeId", "rateoptions"),
            ),
            page("/companies", "companies", "Companies"),
            page("/companies/journalreports", "journalreports", "Journal reports"),
            page(
                "/companies/journalreports/{journalReportId:int}/entries",
                "journalentries",
                "Entries of a journal report",
                source=children("journalReportId", "journalentries"),
            ),
            item("/companies/{companyId:int}", "companies", "One company"),
            page("/cashreservations/accounts", "cashaccounts", "Cash accounts"),
            page("/cashreservations/clearance", "cashclearances", "Cash clearances"),
            page("/customers", "customers", "Customers"),
            item("/customers/{customerId:int}", "customers", "One customer"),
            page(
                "/reservations",
                "reservations",
                "Reservations",
                no_content=True,
                extra=self._reservation_filters,
                params=res_params,
            ),
            Endpoint(
                "POST",
                "/reservations",
                self.create_reservation,
                "object",
                None,
                "Create a reservation",
                body=True,
            ),
            page(
                "/reservations/details",
                "reservations",
                "Reservations with sections",
                no_content=True,
                extra=self._reservation_filters,
                view=self._reservation_details,
                params=(*res_params, sections),
            ),
            page(
                "/reservations/bills",
                "billlines",
                "Bill lines of several reservations",
                extra=self._bill_filters,
                source=self._bill_source,
                params=(ids, payer),
            ),
            item("/reservations/{reservationId:int}", "reservations", "One reservation"),
            Endpoint(
                "PUT",
                "/reservations/{reservationId:int}",
                self.update_reservation,
                "object",
                None,
                "Status action / expected times",
                body=True,
            ),
            item(
                "/reservations/{reservationId:int}/details",
                "reservations",
                "One reservation with sections",
                view=self._reservation_details,
                params=(sections,),
            ),
            Endpoint(
                "GET",
                "/reservations/{reservationId:int}/bills",
                self.reservation_bills,
                "array",
                "billlines",
                "Bill of one payer",
                params=(Param("payerType", required=True),),
            ),
            page(
                "/reservations/{reservationId:int}/content",
                "reservedresources",
                "Reserved resources",
                source=children("reservationId", "reservedresources"),
            ),
            Endpoint(
                "GET",
                "/reservations/{reservationId:int}/subjects",
                self.reservation_subjects,
                "array",
                "subjects",
                "Subjects",
            ),
            page("/events", "events", "Event feed (filter=eventId>{cursor}&sort=eventId,asc)"),
        ]

    # -- helpers ------------------------------------------------------------------------------

    def types(self, collection: str) -> dict[str, str]:
        """Field types inferred from the first records (cached once the collection has any)."""
        cached = self._types.get(collection)
        if cached is not None:
            return cached
        types = infer_types(self.world.records(collection))
        pk = COLLECTIONS.get(collection)
        if not types:
            any_field = _AnyField()
            if pk:
                any_field[pk] = INT
            return any_field
        if pk:
            types[pk] = INT
        self._types[collection] = types
        return types

    def warm_cache(self) -> int:
        """Encode every record of the lists the pipeline reads (as it reads them) into the
        cache now, so the first full read is served from bytes; returns the cached bytes."""
        views = [(c, self.plain_view(c)) for c in WARM_COLLECTIONS]
        views += [
            ("accommodationtypes", self._accotype_view(True)),
            ("reservations", self._details_view(set(RESERVATION_SECTIONS))),
        ]
        with self.world.lock:
            if not self.cache.sync(self.world):
                return 0
            for collection, view in views:
                self.cache.encode_all(
                    view.variant,
                    self.world.records(collection),
                    COLLECTIONS[collection],
                    view.encode,
                    enabled=True,
                )
            return self.cache.nbytes

    def close(self) -> None:
        """Let the page thread go (the server has stopped)."""
        self._pages.shutdown(wait=False)

    def plain_view(self, collection: str) -> View:
        return plain_view(collection, from_columns=self.from_columns)

    def today(self) -> str:
        return self.world.now.date().isoformat()

    @staticmethod
    def decision(request: Request) -> FaultDecision:
        return getattr(request.state, "faults", NO_FAULTS)

    def _churn(self, request: Request, collection: str) -> None:
        if "churn" in self.decision(request) and hasattr(self.world, "churn"):
            self.world.churn(collection)

    def _malform(self, request: Request, records: list[Record], collection: str) -> list[Record]:
        if "malformed" not in self.decision(request):
            return records
        pk = COLLECTIONS.get(collection, "id")
        return malform(records, pk, self.faults.rng(), self.faults.malformed_fraction)

    def _page_handler(
        self,
        collection: str,
        *,
        no_content: bool = False,
        extra: Callable[[Request], Filters] | None = None,
        view: Callable[[Request], View] | None = None,
        source: Callable[[Request], Sequence[Record]] | None = None,
    ) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            call = functools.partial(
                self._page_body,
                request,
                collection,
                extra=extra,
                view=view,
                source=source,
                no_content=no_content,
            )
            body = await asyncio.get_running_loop().run_in_executor(self._pages, call)
            if body is None:
                return Response(status_code=204)
            return Response(body, media_type=_JSON)

        handler.__name__ = f"page_{collection}"
        return handler

    def _page_body(
        self,
        request: Request,
        collection: str,
        *,
        extra: Callable[[Request], Filters] | None,
        view: Callable[[Request], View] | None,
        source: Callable[[Request], Sequence[Record]] | None,
        no_content: bool,
    ) -> bytes | None:
        """One page as JSON bytes, or None for an empty page of a 204-when-empty endpoint.

        Under the world's lock: select the records and take their encoded bytes (from the
        cache, encoding the misses). Outside it: join them into the envelope.
        """
        query = request.query_params
        page, size = parse_paging(query.get("page"), query.get("size"), self.settings.max_page_size)
        show_archived = request.headers.get("x-show-archived", "false").lower() == "true"
        pk = COLLECTIONS[collection]
        served = view(request) if view is not None else self.plain_view(collection)
        world = self.world
        with world.lock:
            self._churn(request, collection)
            types = self.types(collection)
            filters = compile_filters(query.getlist("filter"), types)
            orders = parse_sort(query.getlist("sort"), types)
            if extra is not None:
                filters += extra(request)
            if not show_archived and dict.get(types, "archivedFrom") is not None:
                filters.append([Condition("archivedFrom", LIVE_OP, self.today())])
            if source is not None:
                records = source(request)
                # a lazy child view knows its keys (ascending): bisect, render only the page
                keys = getattr(records, "key_list", None)
            else:
                keys, records = world.keys(collection), world.records(collection)
                if len(keys) != len(records):  # a world mid-change; correctness over speed
                    keys = None
            if keys is not None:
                plan = plan_keys(filters, pk)
                selection = select_keyed(
                    keys, records, plan, build_predicate(plan.rest, types), orders, pk, page, size
                )
            else:
                selection = select(records, build_predicate(filters, types), orders, page, size)
            content = selection.content
            if "malformed" in self.decision(request):
                # The faulted path only: build the records, damage copies, encode the page.
                damaged = self._malform(request, [served.build(r) for r in content], collection)
                if not damaged and no_content:
                    return None
                return orjson.dumps(
                    envelope(damaged, page=page, size=size, total=selection.total, orders=orders)
                )
            enabled = self.cache.sync(world)
            parts = self.cache.encode_all(
                served.variant,
                content,
                pk,
                served.encode,
                enabled=enabled,
                encode_many=served.encode_many,
            )
        if not parts and no_content:
            return None
        return page_bytes(parts, page=page, size=size, total=selection.total, orders=orders)

    def _item_handler(
        self, collection: str, view: Callable[[Request], View] | None
    ) -> Callable[[Request], Any]:
        pk = COLLECTIONS[collection]

        def body(request: Request) -> bytes:
            key = next(iter(request.path_params.values()))
            served = view(request) if view is not None else self.plain_view(collection)
            with self.world.lock:
                record = self.world.get(collection, key)
                if record is None:
                    raise ApiError(404, "NOT_FOUND", f"{pk} {key} not found")
                if "malformed" in self.decision(request):
                    damaged = self._malform(request, [served.build(record)], collection)[0]
                    return orjson.dumps(damaged)
                enabled = self.cache.sync(self.world)
                return bytes(
                    self.cache.encode_all(
                        served.variant, [record], pk, served.encode, enabled=enabled
                    )[0]
                )

        async def handler(request: Request) -> Response:
            return Response(await run_in_threadpool(body, request), media_type=_JSON)

        handler.__name__ = f"item_{collection}"
        return handler

    # -- endpoint-specific parameters and views -----------------------------------------------

    def _accotype_filters(self, request: Request) -> Filters:
        ids = _ids(request.query_params.getlist("resourceIds"), "resourceIds")
        return [[Condition("resourceId", "in", frozenset(ids))]] if ids else []

    @staticmethod
    def _accotype_record(record: Record) -> Record:
        if "capacities" not in record:
            return record
        return {k: v for k, v in record.items() if k != "capacities"}

    def _accotype_plain(self, request: Request) -> View:
        build = self._accotype_record
        return View("accommodationtypes", build, lambda r: orjson.dumps(build(r)))

    def _accotype_details(self, request: Request) -> View:
        return self._accotype_view("CAPACITIES" in _sections(request, ACCOMMODATION_SECTIONS))

    def _accotype_view(self, with_capacities: bool) -> View:
        def build(record: Record) -> Record:
            out = dict(self._accotype_record(record))
            if with_capacities:
                if hasattr(self.world, "capacities"):
                    out["capacities"] = self.world.capacities(record["resourceId"])
                else:
                    out["capacities"] = record.get("capacities") or []
            return out

        variant = "accommodationtypes/details" + (":CAPACITIES" if with_capacities else "")
        return View(variant, build, lambda r: orjson.dumps(build(r)))

    def _ratetype_filters(self, request: Request) -> Filters:
        code = request.query_params.get("distributionChannelCode")
        if not code:
            return []
        ids = [
            r["distributionChannelId"]
            for r in self.world.records("distributionchannels")
            if r.get("code") == code
        ]
        if not ids:
            return [[Condition("rateTypeId", "in", frozenset())]]
        return [[Condition("distributionChannelIds", ":", i) for i in ids]]

    def _reservation_filters(self, request: Request) -> Filters:
        query = request.query_params
        filters: Filters = []
        ids = _ids(query.getlist("reservationIds"), "reservationIds")
        if ids:
            filters.append([Condition("reservationId", "in", frozenset(ids))])
        if code := query.get("distributionChannelCode"):
            filters.append([Condition("distributionChannelCode", "::", code)])
        wanted = {name: _int(query.get(name), name) for name in ("resourceId", "unitId")}
        wanted = {k: v for k, v in wanted.items() if v is not None}
        if wanted:
            matching = frozenset(
                r["reservationId"]
                for r in self.world.records("reservedresources")
                if all(r.get(k) == v for k, v in wanted.items())
            )
            filters.append([Condition("reservationId", "in", matching)])
        return filters

    def _reservation_details(self, request: Request) -> View:
        return self._details_view(_sections(request, RESERVATION_SECTIONS))

    def _details_view(self, sections: set[str]) -> View:
        asked = [name for name in RESERVATION_SECTIONS if name in sections]
        bills = [(payer, key) for name, (payer, key) in BILL_SECTIONS.items() if name in sections]
        world = self.world
        batch = getattr(world, "children_many", None)  # beyond the protocol: optional
        columnar = getattr(world, "encode_with_children", None) if self.from_columns else None
        # the sections as (key, child collection, field, value): children whose field equals
        # the value (all of them when the field is None), in the order they are served
        spec: list[tuple[str, str, str | None, Any]] = []
        if "RESERVEDRESOURCES" in sections:
            spec.append(("reservedResources", "reservedresources", None, None))
        spec += [(key, "billlines", "payerType", payer) for payer, key in bills]
        if "SUBJECTS" in sections:
            spec.append(("subjects", "subjects", None, None))

        def sections_of(records: Sequence[Record]) -> list[dict[str, list[Record]]]:
            """Per record, its sections in contracts order, each child collection rendered for
            all `records` in one batch. `{**record, **sections}` keeps the record's field order
            and appends the sections (the served field order)."""
            rids = [record["reservationId"] for record in records]

            def kids(collection: str) -> list[list[Record]]:
                if batch is not None:
                    return batch(collection, rids)
                return [world.children(collection, rid) for rid in rids]

            resources = kids("reservedresources") if "RESERVEDRESOURCES" in sections else None
            lines = kids("billlines") if bills else None
            subjects = kids("subjects") if "SUBJECTS" in sections else None
            out: list[dict[str, list[Record]]] = []
            for i in range(len(records)):
                sec: dict[str, list[Record]] = {}
                if resources is not None:
                    sec["reservedResources"] = resources[i]
                if lines is not None:
                    by_payer: dict[Any, list[Record]] = {}
                    for line in lines[i]:
                        by_payer.setdefault(line.get("payerType"), []).append(line)
                    for payer, key in bills:
                        sec[key] = by_payer.get(payer, [])
                if subjects is not None:
                    sec["subjects"] = subjects[i]
                out.append(sec)
            return out

        def build(record: Record) -> Record:
            return {**record, **sections_of([record])[0]}

        def encode_built(records: Sequence[Record]) -> list[bytes]:
            return [
                orjson.dumps({**record, **sec})
                for record, sec in zip(records, sections_of(records), strict=True)
            ]

        def encode_many(records: Sequence[Record]) -> Sequence[bytes]:
            encoded = columnar("reservations", records, spec) if columnar is not None else None
            if encoded is None:
                return encode_built(records)
            # records the columns cannot give (thawed, or with children added later) are built
            built = [i for i, data in enumerate(encoded) if data is None]
            if not built:
                return encoded  # type: ignore[return-value]
            out = list(encoded)
            subset = getattr(records, "subset", None)
            todo = subset(built) if subset is not None else [records[i] for i in built]
            for i, data in zip(built, encode_built(todo), strict=True):
                out[i] = data
            return out

        def encode(record: Record) -> bytes:
            return encode_many([record])[0]

        return View("reservations/details:" + ",".join(asked), build, encode, encode_many)

    def _payer(self, request: Request, *, required: bool) -> str | None:
        payer = request.query_params.get("payerType")
        if payer is None:
            if required:
                raise ApiError(400, "MISSING_PARAMETER", "payerType is required")
            return None
        if payer not in PAYER_TYPES:
            raise ApiError(400, "INVALID_PARAMETER", f"payerType must be one of {PAYER_TYPES}")
        return payer

    def _bill_filters(self, request: Request) -> Filters:
        payer = self._payer(request, required=False)
        return [[Condition("payerType", "::", payer)]] if payer else []

    def _bill_source(self, request: Request) -> Sequence[Record]:
        ids = _ids(request.query_params.getlist("reservationIds"), "reservationIds")
        if not ids:
            return self.world.records("billlines")
        return [line for rid in sorted(set(ids)) for line in self.world.children("billlines", rid)]

    # -- handlers -----------------------------------------------------------------------------

    async def authenticate(self, request: Request) -> Response:
        # Parsed by hand: the form is always url-encoded, and starlette's parser needs an extra
        # dependency (python-multipart) for nothing else.
        fields = dict(parse_qsl((await request.body()).decode("utf-8", "replace")))
        try:
            return json_response(self.tokens.authenticate(fields))
        except AuthError as exc:
            return error_response(exc.status, exc.code, exc.message)

    async def reservation_bills(self, request: Request) -> Response:
        payer = self._payer(request, required=True)
        rid = request.path_params["reservationId"]

        def body() -> bytes:
            with self.world.lock:
                if self.world.get("reservations", rid) is None:
                    raise ApiError(404, "NOT_FOUND", f"reservationId {rid} not found")
                lines = [
                    r for r in self.world.children("billlines", rid) if r.get("payerType") == payer
                ]
                return orjson.dumps(self._malform(request, lines, "billlines"))

        return Response(await run_in_threadpool(body), media_type=_JSON)

    async def reservation_subjects(self, request: Request) -> Response:
        rid = request.path_params["reservationId"]

        def body() -> bytes:
            with self.world.lock:
                if self.world.get("reservations", rid) is None:
                    raise ApiError(404, "NOT_FOUND", f"reservationId {rid} not found")
                subjects = self.world.children("subjects", rid)
                return orjson.dumps(self._malform(request, subjects, "subjects"))

        return Response(await run_in_threadpool(body), media_type=_JSON)

    async def _json_body(self, request: Request) -> dict[str, Any]:
        try:
            body = orjson.loads(await request.body() or b"{}")
        except orjson.JSONDecodeError:
            raise ApiError(400, "INVALID_BODY", "request body is not valid JSON") from None
        if not isinstance(body, dict):
            raise ApiError(400, "INVALID_BODY", "request body must be a JSON object")
        return body

    async def create_reservation(self, request: Request) -> Response:
        body = await self._json_body(request)

        def call() -> Record:
            with self.world.lock:
                return self.world.create_reservation(body)

        return json_response(await run_in_threadpool(call), 201)

    async def update_reservation(self, request: Request) -> Response:
        body = await self._json_body(request)
        rid = request.path_params["reservationId"]

        def call() -> Record:
            with self.world.lock:
                if self.world.get("reservations", rid) is None:
                    raise ApiError(404, "NOT_FOUND", f"reservationId {rid} not found")
                return self.world.update_reservation(rid, body)

        return json_response(await run_in_threadpool(call))

    async def availability_get(self, request: Request) -> Response:
        query = request.query_params
        params = {
            name: query.get(name)
            for name in (
                "arrivalDateFrom",
                "arrivalDateTo",
                "distributionChannelCode",
                "rateTypeId",
                "locationId",
            )
        }
        params["resourceIds"] = query.getlist("resourceId") + query.getlist("resourceIds")
        params["durations"] = query.getlist("duration")
        return await self._availability(params)

    async def availability_post(self, request: Request) -> Response:
        body = await self._json_body(request)
        params = dict(body)
        params.setdefault("arrivalDateFrom", body.get("arrivalDate"))
        resource = body.get("resourceIds", body.get("resourceId"))
        params["resourceIds"] = (
            resource if isinstance(resource, list) else ([] if resource is None else [resource])
        )
        duration = body.get("durations", body.get("duration"))
        params["durations"] = (
            duration if isinstance(duration, list) else ([] if duration is None else [duration])
        )
        return await self._availability(params)

    async def _availability(self, params: Mapping[str, Any]) -> Response:
        if not params.get("arrivalDateFrom"):
            raise ApiError(400, "MISSING_PARAMETER", "arrivalDateFrom is required")
        start = _date(params["arrivalDateFrom"], "arrivalDateFrom")
        end = _date(params.get("arrivalDateTo") or params["arrivalDateFrom"], "arrivalDateTo")
        if end < start:
            raise ApiError(400, "INVALID_PARAMETER", "arrivalDateTo is before arrivalDateFrom")
        if (end - start).days + 1 > MAX_ARRIVAL_DAYS:
            raise ApiError(
                400, "RANGE_TOO_LARGE", f"at most {MAX_ARRIVAL_DAYS} arrival dates per call"
            )
        resource_ids = [
            int(i)
            for v in params.get("resourceIds") or []
            for i in (_int_list(v, "resourceId") or [])
        ]
        durations = [
            int(i) for v in params.get("durations") or [] for i in (_int_list(v, "duration") or [])
        ]
        kwargs = {
            "arrival_from": start,
            "arrival_to": end,
            "resource_ids": resource_ids or None,
            "location_id": _int(params.get("locationId"), "locationId"),
            "durations": durations or None,
            "rate_type_id": _int(params.get("rateTypeId"), "rateTypeId"),
            "distribution_channel_code": params.get("distributionChannelCode") or None,
        }

        def call() -> bytes:
            with self.world.lock:
                return orjson.dumps(self.world.availability(**kwargs))

        return Response(await run_in_threadpool(call), media_type=_JSON)

    async def openapi(self, request: Request) -> Response:
        def build() -> bytes:
            with self.world.lock:
                doc = build_openapi(
                    self.endpoints,
                    base_path=SERVICE_PREFIX,
                    types_for=lambda c: dict(self.types(c)),
                )
            return orjson.dumps(doc)

        return Response(await run_in_threadpool(build), media_type=_JSON)

    # -- admin ----------------------------------------------------------------------------------

    async def admin_health(self, request: Request) -> Response:
        return json_response({"status": "ok", "now": self.world.now.isoformat()})

    async def admin_stats(self, request: Request) -> Response:
        return json_response({**self.stats.snapshot(), "faults": self.faults.describe()})

    async def admin_stats_reset(self, request: Request) -> Response:
        self.stats.reset()
        return json_response(self.stats.snapshot())

    async def admin_advance(self, request: Request) -> Response:
        try:
            hours = float(request.query_params.get("hours", "1"))
        except ValueError:
            raise ApiError(400, "INVALID_PARAMETER", "hours must be a number") from None
        if hours < 0:
            raise ApiError(400, "INVALID_PARAMETER", "hours must be >= 0")

        def call() -> Any:
            with self.world.lock:
                summary = self.world.advance(hours)
                self._types.clear()
                return {"now": self.world.now.isoformat(), "summary": summary}

        return Response(orjson.dumps(await run_in_threadpool(call), default=str), media_type=_JSON)

    async def admin_faults(self, request: Request) -> Response:
        if request.method == "POST":
            body = await self._json_body(request)
            rates = (
                body["faults"]
                if isinstance(body.get("faults"), dict)
                else {
                    k: v
                    for k, v in body.items()
                    if k not in ("seed", "slowSeconds", "malformedFraction")
                }
            )
            try:
                self.faults.configure(
                    rates,
                    seed=_int(body.get("seed"), "seed"),
                    slow_seconds=body.get("slowSeconds"),
                    malformed_fraction=body.get("malformedFraction"),
                )
            except ValueError as exc:
                raise ApiError(400, "INVALID_FAULTS", str(exc)) from None
        return json_response(self.faults.describe())

    # -- stats templates ----------------------------------------------------------------------

    def template_for(self, scope: Scope) -> str:
        """`GET /service/v2/reservations/{reservationId}` for stats, or the raw path if unrouted."""
        key = (scope["method"], scope["path"])
        found = self._templates.get(key)
        if found is not None:
            return found
        found = f"{scope['method']} (unmatched)"
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                found = f"{scope['method']} {template(route.path)}"
                break
        if len(self._templates) >= TEMPLATE_CACHE_SIZE:
            self._templates.clear()
        self._templates[key] = found
        return found


class ServiceGate:
    """Throttle, latency, faults, auth and stats for `/service/v2` (see module docstring)."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(SERVICE_PREFIX):
            await self.app(scope, receive, send)
            return
        service = self.service
        stats = service.stats
        endpoint = service.template_for(scope)
        client = (scope.get("client") or ("unknown", 0))[0]
        if stats.in_flight_by_client[client] >= service.settings.max_concurrency:
            stats.record(endpoint, 429, throttled=True)
            await _send_error(
                send, 429, "TOO_MANY_REQUESTS", "too many concurrent requests from this address"
            )
            return
        status = [0]
        left = [False]

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif (
                message["type"] == "http.response.body"
                and not message.get("more_body")
                and not left[0]
            ):
                # the request stops counting before its last bytes go out: once the client has
                # the whole answer it may send the next request, which must find the slot free
                left[0] = True
                stats.leave(client)
            await send(message)

        stats.enter(client)
        try:
            await self._serve(scope, receive, counting_send)
        finally:
            if not left[0]:
                stats.leave(client)
            stats.record(endpoint, status[0])

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        service = self.service
        settings = service.settings
        if settings.latency_ms > 0:
            await asyncio.sleep(settings.latency_ms / 1000)
        if scope["path"] == AUTHENTICATE_PATH:
            await self.app(scope, receive, send)
            return
        names = FAULT_NAMES if scope["method"] == "GET" else ("token_expire",)
        decision = service.faults.decide(names)
        if decision.status is not None:
            await _send_error(
                send,
                decision.status,
                f"FAULT_{decision.status}",
                "injected fault: service temporarily unavailable",
            )
            return
        headers = dict(scope["headers"])
        try:
            service.tokens.check(headers.get(b"authorization", b"").decode("latin-1"))
        except AuthError as exc:
            await _send_error(send, exc.status, exc.code, exc.message)
            return
        if "token_expire" in decision:
            await _send_error(send, 401, "TOKEN_EXPIRED", "access token expired")
            return
        if "slow" in decision:
            await asyncio.sleep(service.faults.slow_seconds)
        scope.setdefault("state", {})["faults"] = decision
        if "drop" in decision or "truncate" in decision:
            send = _breaking_send(send, drop="drop" in decision)
        await self.app(scope, receive, send)


def _breaking_send(send: Send, *, drop: bool) -> Send:
    """Hold the response, then send half of its body: closed mid-body (drop) or short (truncate)."""
    held: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def breaking_send(message: Message) -> None:
        if message["type"] == "http.response.start":
            held["start"] = message
            return
        if message["type"] != "http.response.body" or held.get("done"):
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body"):
            return
        held["done"] = True
        body = b"".join(chunks)
        start = held["start"]
        if not body or start["status"] != 200:
            await send(start)
            await send({"type": "http.response.body", "body": body})
            return
        half = truncate(body)
        if drop:
            # Returning without completing the body makes uvicorn close the connection.
            await send(start)
            await send({"type": "http.response.body", "body": half, "more_body": True})
            return
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(half)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": half})

    return breaking_send


async def _send_error(send: Send, status: int, code: str, message: str) -> None:
    body = error_body(status, code, message)
    headers = [(b"content-type", _JSON.encode()), (b"content-length", str(len(body)).encode())]
    if status in (429, 503):
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _api_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, ApiError):
        return error_response(exc.status, exc.code, exc.message)
    if isinstance(exc, QueryError):
        return error_response(400, exc.code, exc.message)
    if isinstance(exc, WorldError):
        return error_response(400, "INVALID_REQUEST", str(exc))
    if isinstance(exc, HTTPException):
        code = ERROR_NAMES.get(exc.status_code, "ERROR")
        return error_response(exc.status_code, code, str(exc.detail))
    raise exc


def create_app(world: World, settings: SandboxSettings | None = None) -> Starlette:
    """The sandbox ASGI app over `world`; `app.state.service` exposes stats, faults and tokens."""
    if settings is None:
        from sandbox.runner import SandboxSettings

        settings = SandboxSettings()
    service = Service(world, settings)
    app = Starlette(
        routes=service.routes,
        middleware=[Middleware(ServiceGate, service=service)],
        exception_handlers={
            ApiError: _api_error,
            QueryError: _api_error,
            WorldError: _api_error,
            HTTPException: _api_error,
        },
    )
    app.state.service = service
    return app


__all__ = ["ADMIN_PREFIX", "SERVICE_PREFIX", "ApiError", "Service", "Stats", "create_app"]
