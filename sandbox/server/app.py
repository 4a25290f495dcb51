"""`create_app`: the Starlette app of one sandbox (routes, `ServiceGate`, error answers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response

from sandbox.filters import QueryError
from sandbox.protocol import World, WorldError
from sandbox.server.clock import WorldClockHeader
from sandbox.server.common import ERROR_NAMES, ApiError, error_response
from sandbox.server.gate import ServiceGate
from sandbox.server.routes import Service

if TYPE_CHECKING:
    from sandbox.settings import SandboxSettings


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
        from sandbox.settings import SandboxSettings

        settings = SandboxSettings()
    service = Service(world, settings)
    app = Starlette(
        routes=service.routes,
        # the world's clock on every response, the gate's own answers (429, faults) included
        middleware=[
            Middleware(WorldClockHeader, world=world),
            Middleware(ServiceGate, service=service),
        ],
        exception_handlers={
            ApiError: _api_error,
            QueryError: _api_error,
            WorldError: _api_error,
            HTTPException: _api_error,
        },
    )
    app.state.service = service
    return app
