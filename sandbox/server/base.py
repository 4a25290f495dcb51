"""The state every handler of a sandbox app shares (`ServiceBase`) and its small helpers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import orjson
from starlette.requests import Request
from starlette.routing import Match, Route
from starlette.types import Scope

from sandbox.areas import AreaRefusals
from sandbox.auth import Credentials, TokenStore
from sandbox.encode import DEFAULT_CACHE_BYTES, RecordCache
from sandbox.faults import NO_FAULTS, FaultDecision, Faults, malform
from sandbox.filters import INT, UNKNOWN, infer_types
from sandbox.openapi import Endpoint, template
from sandbox.protocol import COLLECTIONS, Record, World
from sandbox.server.common import PAYER_TYPES, TEMPLATE_CACHE_SIZE, ApiError
from sandbox.server.encode_pool import EncodePool
from sandbox.server.encoding import View, plain_view
from sandbox.server.stats import Stats

if TYPE_CHECKING:
    from sandbox.settings import SandboxSettings


class _AnyField(dict):  # type: ignore[type-arg]
    """Field types of an empty collection: every name is accepted (nothing can match anyway)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return UNKNOWN

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return dict.get(self, key, UNKNOWN)


class ServiceBase:
    """Shared state of one sandbox app and the helpers every group of handlers uses.

    `Service` (sandbox/server/routes.py) combines it with the handler groups and builds the
    route table; the groups only reach each other through `Service`.
    """

    endpoints: list[Endpoint]  # the served interface, set by `Service`
    routes: list[Route]

    def __init__(self, world: World, settings: SandboxSettings) -> None:
        self.world = world
        self.settings = settings
        # the strict profile: the real service's behaviour where the notes speak (docs/sandbox.md)
        self.strict = getattr(settings, "profile", "default") == "strict"
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
        self.areas = AreaRefusals(getattr(settings, "refused_areas", None))
        self.cache = RecordCache(getattr(settings, "encode_cache_bytes", DEFAULT_CACHE_BYTES))
        # List pages are built in one thread of their own: they take the world's lock anyway,
        # and a cold read's encoding then reuses one thread's malloc and Arrow heaps instead of
        # growing (and page-faulting in) a heap per pool thread, which cost ~1 s of kernel time
        # per medium full read.
        self._pages = ThreadPoolExecutor(1, thread_name_prefix="sandbox-pages")
        self.encode_pool: EncodePool | None = None  # see start_encode_pool
        # encode frozen records from the world's columns (same bytes as rendering them)
        self.from_columns = getattr(settings, "encode_from_columns", True)
        self._types: dict[str, dict[str, str]] = {}
        self._templates: dict[tuple[str, str], str] = {}

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

    def start_encode_pool(self, workers: int) -> EncodePool | None:
        """Fork `workers` processes that encode cold batches of the generated world (before the
        server starts: no server thread may exist yet; sandbox/server/encode_pool.py). The
        strict profile shapes records in the server's process and gets none."""
        if workers <= 0 or self.strict or self.encode_pool is not None:
            return None
        self.encode_pool = EncodePool(self, workers)
        # one page thread per worker and one to select pages while they encode
        self._pages.shutdown(wait=True)
        self._pages = ThreadPoolExecutor(1 + workers, thread_name_prefix="sandbox-pages")
        return self.encode_pool

    def close(self) -> None:
        """Let the page threads and the encode workers go (the server has stopped)."""
        self._pages.shutdown(wait=False)
        if self.encode_pool is not None:
            self.encode_pool.retire("the server stopped")

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

    async def _json_body(self, request: Request) -> dict[str, Any]:
        try:
            body = orjson.loads(await request.body() or b"{}")
        except orjson.JSONDecodeError:
            raise ApiError(400, "INVALID_BODY", "request body is not valid JSON") from None
        if not isinstance(body, dict):
            raise ApiError(400, "INVALID_BODY", "request body must be a JSON object")
        return body

    def _payer(self, request: Request, *, required: bool) -> str | None:
        payer = request.query_params.get("payerType")
        if payer is None:
            if required:
                raise ApiError(400, "MISSING_PARAMETER", "payerType is required")
            return None
        if payer not in PAYER_TYPES:
            raise ApiError(400, "INVALID_PARAMETER", f"payerType must be one of {PAYER_TYPES}")
        return payer

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
