"""Where a landing's pages are normalised: in this thread, or by the worker pool once the stream
has brought `WORKER_MIN_BYTES` of undecoded JSON; either way the results apply in page order.

Decoding a page's JSON and normalising it is most of an extraction's CPU, and in this process it
competes for the GIL with the event loop that keeps the requests in flight. An undecoded
`LazyRecords` page pickles as its bytes; a worker decodes and normalises it and sends back the
Arrow tables (`assets.workers`). Results are applied in page order, at most
`INFLIGHT_PER_WORKER` pages per worker in flight, so the lake gets the same rows in the same
order and files as in-thread normalisation. A landing that streams its rows to the lake
(`folders` given) has the workers write them as parts themselves (`assets.worker_writes`): the
same rows, in parts staged by each worker (with one worker, the same parts).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from pathlib import Path
from typing import NoReturn

from assets import worker_writes, workers
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
        *,
        folders: Mapping[str, Path] | None = None,
        guard: Sequence[str] = (),
    ) -> None:
        """`folders` (each table's): the workers write the good rows as parts there, and send
        back the parts (`assets.worker_writes`) and, of a full batch, the `guard` columns."""
        self.spec, self.kind, self._apply = spec, kind, apply
        self.normaliser = Normaliser(
            spec, batch_id=batch_id, batch_kind=kind, include_pii=settings.include_pii
        )
        self.workers = 0  # worker processes normalising the pages, once the pool is used
        # The worker pool (workers can look up only the catalogue's own specs by name).
        self._n_workers = (
            workers.worker_count(settings.normalise_workers) if workers.registered(spec) else 0
        )
        self._write = folders is not None
        self._job = workers.Job(
            spec.name,
            batch_id,
            kind,
            settings.include_pii,
            folders=tuple((name, str(f)) for name, f in (folders or {}).items()),
            flush_rows=settings.flush_rows,
            guard=tuple(guard) if kind == "full" and self._write else (),
        )
        self._pool: workers.Pool | None = None
        self._inflight: deque[tuple[int, Future[PageResult]]] = deque()  # (worker, result)
        self._writing: set[int] = set()  # workers that may hold rows of this landing
        self._turn = 0
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
        task = worker_writes.land_in_worker if self._write else workers.normalise_in_worker
        worker = self._pick()
        try:
            self._inflight.append(
                (worker, self._pool.submit_to(worker, task, self._job, page, extracted_at))
            )
        except BrokenProcessPool as exc:
            self._died(exc)
        if self._write:
            self._writing.add(worker)
        while len(self._inflight) >= INFLIGHT_PER_WORKER * self._n_workers:
            self._apply_oldest()

    def _pick(self) -> int:
        """The worker with the fewest pages still being normalised (ties: the next in turn)."""
        n = self._n_workers
        busy = [0] * n
        for worker, pending in self._inflight:
            busy[worker] += not pending.done()
        self._turn = min(range(n), key=lambda w: (busy[w], (w - self._turn - 1) % n))
        return self._turn

    def _worker_min_bytes(self) -> int:
        """Undecoded JSON after which the pages go to the worker pool (see DELTA_START_FACTOR)."""
        if self.kind == "full" or workers.pool_running():
            return WORKER_MIN_BYTES
        return WORKER_MIN_BYTES * DELTA_START_FACTOR

    def finish(self) -> None:
        """Apply the pages still in the worker pool; workers that write the rows write what
        they still buffer, and their last parts are applied too."""
        while self._inflight:
            self._apply_oldest()
        writing, self._writing = sorted(self._writing), set()
        if not writing or self._pool is None:
            return
        for worker in writing:
            try:
                flushed = self._pool.submit_to(worker, worker_writes.flush_in_worker, self._job)
            except BrokenProcessPool as exc:
                self._died(exc)
            self._inflight.append((worker, flushed))
        while self._inflight:
            self._apply_oldest()

    def cancel(self) -> None:
        """Drop the pages still in the worker pool, and what workers buffer and staged of them."""
        for _, pending in self._inflight:
            pending.cancel()
        self._inflight.clear()
        writing, self._writing = sorted(self._writing), set()
        drops = []
        for worker in writing if self._pool is not None else []:
            with contextlib.suppress(RuntimeError):  # a broken or discarded pool
                drops.append(self._pool.submit_to(worker, worker_writes.drop_in_worker, self._job))
        for drop in drops:  # before the landing deletes its own parts and returns
            with contextlib.suppress(Exception):
                drop.result()

    def _apply_oldest(self) -> None:
        try:
            done = self._inflight.popleft()[1].result()
        except BrokenProcessPool as exc:
            self._died(exc)
        self._apply(done)

    def _died(self, exc: BrokenProcessPool) -> NoReturn:
        workers.discard_pool(self._pool)
        raise NormaliseWorkerDied(workers.died_message(self.spec.table.name, exc)) from exc
