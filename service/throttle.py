"""One cap on requests in flight for the whole process.

The service caps concurrent calls per IP address (default 15), so the cap has to hold across every
client in the process: several Dagster assets running in threads, each with its own event loop.
`asyncio.Semaphore` belongs to one loop, so `ConcurrencyLimiter` is a thread-safe counter whose
waiters are futures woken on their own loop. `limiter_for(base_url, limit)` returns the limiter of
the service's origin (scheme, host, port) from a module-level registry; a client can also be given
a limiter object explicitly (tests, or a caller that wants separate budgets).

A 429 is honoured by the request that got it (it waits Retry-After before its retry, see
`service.client`); `pause()` lets a caller hold back every request to the origin as well.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit


class _Waiter:
    __slots__ = ("future", "granted", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class ConcurrencyLimiter:
    """A counting semaphore usable from any thread and any event loop, with FIFO fairness."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("limit must be >= 1")
        self._limit = limit
        self._in_flight = 0
        self._peak = 0
        self._waiters: deque[_Waiter] = deque()
        self._lock = threading.Lock()
        self._paused_until = 0.0
        self._busy = 0.0  # integral of in-flight requests over time (request-seconds)
        self._changed = time.monotonic()

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def peak(self) -> int:
        """Most requests ever in flight at once through this limiter."""
        return self._peak

    @property
    def busy_seconds(self) -> float:
        """Request-seconds spent in flight so far (divide by limit x wall for utilisation)."""
        with self._lock:
            return self._busy + self._in_flight * (time.monotonic() - self._changed)

    def reset_peak(self) -> None:
        with self._lock:
            self._peak = self._in_flight

    def lower_limit(self, limit: int) -> None:
        """Tighten the cap (a later client asked for less); never raises it."""
        with self._lock:
            self._limit = max(1, min(self._limit, limit))

    def pause(self, seconds: float) -> None:
        """Hold back new requests for `seconds` (for callers that want a global back-off)."""
        with self._lock:
            self._paused_until = max(self._paused_until, time.monotonic() + max(0.0, seconds))

    async def acquire(self) -> None:
        while (delay := self._paused_until - time.monotonic()) > 0:
            await asyncio.sleep(delay)
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._in_flight < self._limit and not self._waiters:
                self._take_locked()
                return
            waiter = _Waiter(loop)
            self._waiters.append(waiter)
        try:
            await waiter.future
        except BaseException:
            with self._lock:
                if waiter.granted:
                    self._release_locked()
                else:
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        with self._lock:
            self._release_locked()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self.acquire()
        try:
            yield
        finally:
            self.release()

    def _account_locked(self) -> None:
        now = time.monotonic()
        self._busy += self._in_flight * (now - self._changed)
        self._changed = now

    def _take_locked(self) -> None:
        self._account_locked()
        self._in_flight += 1
        self._peak = max(self._peak, self._in_flight)

    def _release_locked(self) -> None:
        self._account_locked()
        self._in_flight -= 1
        while self._waiters and self._in_flight < self._limit:
            waiter = self._waiters.popleft()
            try:
                waiter.loop.call_soon_threadsafe(_wake, waiter.future)
            except RuntimeError:  # its loop is closed; the waiter is gone
                continue
            waiter.granted = True
            self._take_locked()


_registry: dict[str, ConcurrencyLimiter] = {}
_registry_lock = threading.Lock()


def origin_of(base_url: str) -> str:
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def limiter_for(base_url: str, limit: int) -> ConcurrencyLimiter:
    """The process-wide limiter of the service at `base_url` (created on first use)."""
    key = origin_of(base_url)
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = _registry[key] = ConcurrencyLimiter(limit)
        else:
            limiter.lower_limit(limit)
        return limiter


def forget_limiters() -> None:
    """Drop the registry (tests that start several sandboxes on reused ports)."""
    with _registry_lock:
        _registry.clear()
