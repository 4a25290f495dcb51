"""The admin API under `/_admin`: health, stats, clock advance and fault configuration."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from sandbox.server.base import ServiceBase
from sandbox.server.common import _JSON, ApiError, json_response
from sandbox.server.params import _int


class AdminHandlers(ServiceBase):
    """Handlers for `/_admin/...` (no token needed; not behind `ServiceGate`)."""

    async def admin_health(self, request: Request) -> Response:
        return json_response({"status": "ok", "now": self.world.now.isoformat()})

    async def admin_stats(self, request: Request) -> Response:
        cache = await run_in_threadpool(self._cache_stats)
        return json_response(
            {**self.stats.snapshot(), "faults": self.faults.describe(), "encodeCache": cache}
        )

    def _cache_stats(self) -> dict[str, Any]:
        with self.world.lock:  # the page threads change the cache under it
            pool = self.encode_pool
            return {
                **self.cache.describe(),
                "pool": pool.describe() if pool is not None else None,
            }

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

    async def admin_areas(self, request: Request) -> Response:
        """The areas refused to the client (sandbox/areas.py); POST `{"owners": 403}` sets them
        (`{}`: none)."""
        if request.method == "POST":
            body = await self._json_body(request)
            try:
                self.areas.configure(body)
            except (TypeError, ValueError) as exc:
                raise ApiError(400, "INVALID_AREAS", str(exc)) from None
        return json_response(self.areas.describe())
