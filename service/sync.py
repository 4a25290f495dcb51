"""Driving the async client from synchronous code (Dagster assets, the CLI).

Each call runs its own event loop; the client must be created inside it (`collect_pages` with a
`ServiceConfig` does that). Pages are handed to `on_page` as they arrive, on the loop's thread,
and the readers wait while the callback runs, so memory stays at a few pages whatever the size
of the list.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from service.api import ReservationService
from service.config import ServiceConfig
from service.page import Record
from service.throttle import ConcurrencyLimiter

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T] | Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even if this thread already runs a loop."""
    if not inspect.iscoroutine(coro):
        factory = coro

        async def call() -> T:
            return await factory()  # type: ignore[operator]

        coro = call()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # Inside a running loop (a notebook, an async caller): use a fresh loop in a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def collect_pages(
    factory: Callable[[], AsyncIterator[list[Record]]],
    *,
    on_page: Callable[[Sequence[Record]], None] | None = None,
) -> int:
    """Consume `factory()` page by page in a private loop; returns the number of records."""

    async def consume() -> int:
        count = 0
        iterator = factory()
        try:
            async for page in iterator:
                count += len(page)
                if on_page is not None:
                    on_page(page)
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
        return count

    return run(consume())


@dataclass
class ExtractResult:
    """What one sync extraction did: records and pages handed over, and the client's counters."""

    records: int = 0
    pages: int = 0
    stats: dict[str, Any] = field(default_factory=dict)


def extract(
    config: ServiceConfig,
    pick: Callable[[ReservationService], AsyncIterator[list[Record]]],
    *,
    on_page: Callable[[Sequence[Record]], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    limiter: ConcurrencyLimiter | None = None,
    used_today: int = 0,
) -> ExtractResult:
    """Open a service, read `pick(service)` to the end and call `on_page` for each page.

    `extract(cfg, lambda s: s.customers(), on_page=writer.write)` is all an asset needs.
    """
    result = ExtractResult()

    async def main() -> None:
        async with ReservationService.connect(
            config, transport=transport, limiter=limiter, used_today=used_today
        ) as service:
            iterator = pick(service)
            try:
                async for page in iterator:
                    result.records += len(page)
                    result.pages += 1
                    if on_page is not None:
                        on_page(page)
            finally:
                await iterator.aclose()  # type: ignore[attr-defined]
                result.stats = service.stats

    run(main())
    return result
