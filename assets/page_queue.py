"""Where a landing's pages are normalised: in this thread, or by the worker pool once the stream
has brought `WORKER_MIN_BYTES` of undecoded JSON; either way the results apply in page order.

Decoding a page's JSON and normalising it is most of an extraction's CPU, and in this process it
competes for the GIL with the event loop that keeps the requests in flight. An undecoded
`LazyRecords` page pickles as its bytes; a worker decodes and normalises it and sends back the
Arrow tables (`assets.workers`). Results are applied in page order, at most
`INFLIGHT_PER_WORKER` pages per worker in flight, so the lake gets the same rows in the same
order and files as in-thread normalisation.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from typing import NoReturn

from assets import workers
from assets.endpoints import EndpointSpec
from assets.normalise import Normaliser
from assets.settings import IngestSettings, Record
from assets.workers import NormaliseWorkerDied, PageResult, normalise_page
from service.lazy import LazyRecords

WORKER_MIN_BYTES = 32 * 2**20
# A stream's pages go to the worker pool once it has received this much undecoded JSON: about the
# CPU (~1.5 s to decode and normalise reservation details) that starting the workers costs. A
# small-scale run (~20 MB of reservation details) stays in the thread; a medium one (~640 MB)
# moves to the pool after its first ~50 pages. Pages that arrive decoded (lists) never count.
# A delta landing starts the pool only past this many times as much, unless it already runs:
# a run in a process of its own (the incremental job under Dagster's run launcher) pays the
# pool's start every run (7 s wall on a loaded host, ~2.4 CPU s of imports in the workers), for
# pages an hour brings (~40 MB of journal entries at the large scale) that cost less in the thread.
DELTA_START_FACTOR = 4
INFLIGHT_PER_WORKER = 2  # pages sent to the pool and not yet applied, per worker


class PageQueue:
    """One stream's pages, normalised here or in the worker pool, handed to `apply` in the
    order they came."""

    def __init__(
        self,
        spec: EndpointSpec,
        batch_id: str,
        kind: str,
        settings: IngestSettings,
        apply: Callable[[PageResult], None],
    ) -> None:
        self.spec, self.kind, self._apply = spec, kind, apply
        self.normaliser = Normaliser(
            spec, batch_id=batch_id, batch_kind=kind, include_pii=settings.include_pii
        )
        self.workers = 0  # worker processes normalising the pages, once the pool is used
        # The worker pool (workers can look up only the catalogue's own specs by name).
        self._n_workers = (
            workers.worker_count(settings.normalise_workers) if workers.registered(spec) else 0
        )
        self._job = workers.Job(spec.name, batch_id, kind, settings.include_pii)
        self._pool: ProcessPoolExecutor | None = None
        self._inflight: deque[Future[PageResult]] = deque()
        self._received = 0  # bytes of undecoded JSON so far

    def add(self, page: Sequence[Record], extracted_at: datetime) -> None:
        """Normalise one page here or in the worker pool; results apply in page order."""
        if isinstance(page, LazyRecords):
            self._received += page.nbytes
        if self._pool is None and self._n_workers and self._received > self._worker_min_bytes():
            self._pool = workers.shared_pool(self._n_workers)
            self.workers = self._n_workers
        if self._pool is None:
            self._apply(normalise_page(self.spec, self.normaliser, page, extracted_at))
            return
        try:
            self._inflight.append(
                self._pool.submit(workers.normalise_in_worker, self._job, page, extracted_at)
            )
        except BrokenProcessPool as exc:
            self._died(exc)
        while len(self._inflight) >= INFLIGHT_PER_WORKER * self._n_workers:
            self._apply_oldest()

    def _worker_min_bytes(self) -> int:
        """Undecoded JSON after which the pages go to the worker pool (see DELTA_START_FACTOR)."""
        if self.kind == "full" or workers.pool_running():
            return WORKER_MIN_BYTES
        return WORKER_MIN_BYTES * DELTA_START_FACTOR

    def finish(self) -> None:
        """Apply the pages still in the worker pool."""
        while self._inflight:
            self._apply_oldest()

    def cancel(self) -> None:
        """Drop the pages still in the worker pool."""
        for pending in self._inflight:
            pending.cancel()
        self._inflight.clear()

    def _apply_oldest(self) -> None:
        try:
            done = self._inflight.popleft().result()
        except BrokenProcessPool as exc:
            self._died(exc)
        self._apply(done)

    def _died(self, exc: BrokenProcessPool) -> NoReturn:
        workers.discard_pool(self._pool)
        raise NormaliseWorkerDied(workers.died_message(self.spec.table.name, exc)) from exc
