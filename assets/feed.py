"""One landing's feed of the worker pool: its pages out in batches, their results back in order.

Pages are gathered until they hold `BATCH_RECORDS` records (ten of the client's pages of 100
reservation details) and sent as one call (`workers.normalise_pages_in_worker`), which reads
them in one parse where it can (`assets.batches`); a page of that many records goes alone.
Each call's results come back as one result per page, and calls are applied in the order they
were sent, so the landing applies every page in the order it came, as in its own thread. At
most `INFLIGHT_PER_WORKER` calls per worker are in flight; the landing commits only after
`drain`, and nothing of a stream is committed when a page fails or a worker dies. A page that
fails does so as alone: the pages before it in its call are applied first (what they
quarantined is kept as evidence), then its error is raised, as the worker raised it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence, Sized
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from typing import Any, NoReturn

from assets import workers
from assets.batches import BATCH_RECORDS, Page
from assets.workers import NormaliseWorkerDied, PageResult

# Calls sent to the pool and not yet applied, per worker; a call carries a batch of pages
# (`BATCH_RECORDS` records, ~4.5 MB of reservation details) or one page of at least that many.
INFLIGHT_PER_WORKER = 2


class PoolFeed:
    """Pages of one landing (`table`, its root) to the pool `pool` of `size` workers; each
    page's result goes to `apply`, in page order."""

    def __init__(
        self,
        pool: ProcessPoolExecutor,
        size: int,
        job: workers.Job,
        table: str,
        apply: Callable[[PageResult], None],
    ) -> None:
        self.pool, self.size, self.job, self.table, self.apply = pool, size, job, table, apply
        self._inflight: deque[tuple[Future[list[PageResult]], list[Page]]] = deque()
        self._batch: list[Page] = []
        self._records = 0

    def add(self, page: Sequence[dict[str, Any]], extracted_at: datetime) -> None:
        """Take a page; apply earlier pages' results where the calls in flight must shrink."""
        self._batch.append((page, extracted_at))
        self._records += len(page) if isinstance(page, Sized) else BATCH_RECORDS
        if self._records >= BATCH_RECORDS:
            self._send()

    def drain(self) -> None:
        """Apply the results of every page still gathered or in flight."""
        self._send()
        while self._inflight:
            self._apply_oldest()

    def cancel(self) -> None:
        """Forget every page not yet applied (the landing is aborted)."""
        for pending, _ in self._inflight:
            pending.cancel()
        self._inflight.clear()
        self._batch, self._records = [], 0

    def _send(self) -> None:
        if self._batch:
            pages, self._batch, self._records = self._batch, [], 0
            self._inflight.append((self._submit(pages), pages))
        while len(self._inflight) >= INFLIGHT_PER_WORKER * self.size:
            self._apply_oldest()

    def _submit(self, pages: list[Page]) -> Future[list[PageResult]]:
        try:
            return self.pool.submit(workers.normalise_pages_in_worker, self.job, pages)
        except BrokenProcessPool as exc:
            self._died(exc)

    def _apply_oldest(self) -> None:
        call, pages = self._inflight.popleft()
        while True:
            try:
                results = call.result()  # a page's error is raised here, as the worker's
            except BrokenProcessPool as exc:
                self._died(exc)
            for result in results:
                self.apply(result)
            if len(results) == len(pages):
                return
            if not results:  # never so: a call's first page gives its result or raises
                raise workers.NormaliseWorkerError(f"table {self.table!r}: no result of a page")
            # a page failed after others (`workers.normalise_pages`): the rest again, from it
            pages = pages[len(results) :]
            call = self._submit(pages)

    def _died(self, exc: BrokenProcessPool) -> NoReturn:
        workers.discard_pool(self.pool)
        raise NormaliseWorkerDied(workers.died_message(self.table, exc)) from exc
