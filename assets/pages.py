"""Drive the async service client from a synchronous Dagster asset with bounded memory.

The client's async generators run on an event loop in a background thread; pages cross to the
asset's thread through a small bounded queue, so at most `QUEUE_PAGES` pages wait while the asset
normalises and writes. Fan-out calls (one per accommodation type, journal report or arrival
window) run concurrently on that loop; the client's own limit bounds the requests in flight.

A page the client delivers undecoded (`service.lazy.LazyRecords`) crosses as it is: its JSON is
decoded by the consumer (the asset's thread or a normaliser worker process), never on the loop.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, suppress
from datetime import UTC, datetime
from typing import Any

from service.lazy import LazyRecords

QUEUE_PAGES = 4
MAX_CONCURRENT_CALLS = 15  # fan-out tasks alive at once; the client bounds actual requests

Page = Sequence[dict[str, Any]]  # a list, or an undecoded `LazyRecords`
_DONE = object()


def list_pages(service: Any, spec: Any, **kwargs: Any) -> Any:
    """A stream's pages (`assets.catalogue.EndpointSpec`): its facade method, or the keyset list
    of its path by its key field when the catalogue names no method."""
    if spec.method is not None:
        return getattr(service, spec.method)(**kwargs)
    return service.client.iter_keyset(spec.source, spec.list_key, params=kwargs or None)


class PageStream:
    """Iterate `(page, extracted_at)`; `stats` holds the client's counters once it is closed."""

    def __init__(
        self,
        open_client: Callable[[], AbstractAsyncContextManager[Any]],
        spec: Any,  # the stream (`assets.catalogue.EndpointSpec`)
        calls: Sequence[Mapping[str, Any]],
        *,
        max_concurrent_calls: int = MAX_CONCURRENT_CALLS,
    ) -> None:
        self._open, self._spec, self._calls = open_client, spec, list(calls)
        self._limit = max_concurrent_calls
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=QUEUE_PAGES)
        self._stop = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self.stats: Any = None
        self.notes: list[str] = []  # what the facade said about its reading (`service_notes`)

    async def _produce(self) -> None:
        async with self._open() as client:
            gate = asyncio.Semaphore(self._limit)

            async def one(kwargs: Mapping[str, Any]) -> None:
                async with gate:
                    async for page in list_pages(client, self._spec, **kwargs):
                        records = page if isinstance(page, LazyRecords) else list(page)
                        item = (records, datetime.now(UTC))
                        while not self._stop.is_set():
                            try:
                                self._queue.put_nowait(item)
                                break
                            except queue.Full:
                                await asyncio.sleep(0.005)
                        if self._stop.is_set():
                            return

            try:
                async with asyncio.TaskGroup() as group:
                    for kwargs in self._calls:
                        group.create_task(one(kwargs))
            finally:
                self.stats = client.stats
                self.notes = service_notes(client)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._task = loop.create_task(self._produce())
            loop.run_until_complete(self._task)
            result: Any = _DONE
        except BaseException as exc:  # handed to the consumer thread
            result = exc
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
        while True:
            try:
                self._queue.put(result, timeout=0.1)
                return
            except queue.Full:
                if self._stop.is_set():
                    return

    def __iter__(self) -> Iterator[tuple[Page, datetime]]:
        thread = threading.Thread(target=self._run, name="service-pages", daemon=True)
        thread.start()
        try:
            while True:
                item = self._queue.get()
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    if isinstance(item, BaseExceptionGroup) and len(item.exceptions) == 1:
                        raise item.exceptions[0]
                    raise item
                yield item
        finally:
            self._stop.set()
            if self._loop is not None and self._task is not None and not self._task.done():
                self._loop.call_soon_threadsafe(self._task.cancel)
            while thread.is_alive():
                with suppress(queue.Empty):
                    self._queue.get(timeout=0.05)
            thread.join()


def requests_used(stats: Any) -> int:
    """Total requests from a stats snapshot (dict with `requests`, or counts per endpoint)."""
    if stats is None:
        return 0
    if isinstance(stats, Mapping):
        if isinstance(stats.get("requests"), int):
            return int(stats["requests"])
        return sum(v for v in stats.values() if isinstance(v, int))
    total = getattr(stats, "requests", None)
    return int(total) if isinstance(total, int) else 0


def service_notes(service: Any) -> list[str]:
    """What a facade says the run report should note (e.g. sections the service refused)."""
    notes = getattr(service, "notes", None)
    return [str(n) for n in notes] if isinstance(notes, list | tuple) else []


def account(report: Any, service: Any) -> None:
    """A run report (`assets.run_report.RunReport`) takes the facade's requests and notes."""
    report.requests = service_requests(service)
    report.notes.extend(service_notes(service))


def service_requests(service: Any) -> int:
    """Requests a facade has made so far (its `stats`)."""
    return requests_used(service.stats)
