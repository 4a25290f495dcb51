from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from service.api import ReservationService
from service.client import ServiceClient
from service.throttle import ConcurrencyLimiter
from tests.service.fakes import FakeService, make_config


def client_for(fake: FakeService, limiter: ConcurrencyLimiter, **config: Any) -> ServiceClient:
    return ServiceClient(make_config(**config), transport=fake.transport(), limiter=limiter)


def service_for(
    fake: FakeService, limiter: ConcurrencyLimiter, **config: Any
) -> ReservationService:
    return ReservationService(client_for(fake, limiter, **config), owns_client=True)


async def drain(pages: AsyncIterator[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    async for page in pages:
        out.extend(page)
    return out
