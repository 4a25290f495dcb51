"""Encoding pages in forked copies of the sandbox (`SandboxSettings.encode_workers`).

At large a full read costs the sandbox ~75 CPU s, most of it encoding reservation details from
the world's columns, under one GIL. The pool forks worker processes once the world is generated
and before the server starts (no thread of the server exists yet): each holds the world as it
was then, shared copy-on-write (the world is mostly numpy and Arrow columns, which reading does
not copy). The server still selects every page and keeps the one encode cache under the world's
lock; only the encoding of a cold batch (a page's misses and its read-ahead) of a keyset page over
a whole collection or one parent's children (a report's journal entries) is sent to a worker, which rebuilds the same lazy page from the positions
and keys and encodes it with the same view. While it waits, the server's page thread lets the
world's lock go, so another page thread can select and hand out the next batch.

Consistency: a worker's world is the world at the fork, i.e. at generation `generation`. The pool
is used only while the world's generation is still that one, checked under the lock before a
batch is sent and again, under the lock, when its bytes come back: a mutation (`advance`, a
write, a churn) moves the generation, its bytes are then dropped and the page is built again in
the server's process (`StalePage`), and the pool is retired for good (the server encodes as
before). So a page is never served from a world older than the one it was selected from, and
served bytes are those the server would encode itself (tests/sandbox/test_encode_pool.py).
Only the default profile's views are sent (plain records and reservation details); the strict
profile, pages of a list built per request (bills by reservation) and faulted pages stay in the
server.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from sandbox.protocol import COLLECTIONS
from sandbox.query import LazyPage

_DETAILS = "reservations/details:"
_SERVICE: Any = None  # the service, in a worker (inherited by the fork)


class _Exact(list[bytes]):
    """Bytes that came through a pipe are sized to their content: the cache keeps them as
    they are (see `RecordCache._keep`)."""

    exact = True


class StalePage(Exception):
    """The world moved while a worker encoded: build the page again in the server."""


def offloadable(variant: str) -> bool:
    """Whether a worker can rebuild this view from its variant (see `view_of`)."""
    return variant in COLLECTIONS or variant.startswith(_DETAILS)


def view_of(service: Any, variant: str) -> Any:
    """The view a variant names: a plain collection, or reservation details with its sections
    and subjects field (`EndpointViews._details_view`)."""
    if variant in COLLECTIONS:
        return service.plain_view(variant)
    sections, subjects_field = variant[len(_DETAILS) :].rsplit(":", 1)
    return service._details_view(set(filter(None, sections.split(","))), subjects_field)


def _start(parent: int) -> None:
    from sandbox.lifeline import die_with

    die_with(parent)


def _ready() -> int:
    return os.getpid()


def _encode(
    variant: str, collection: str, positions: list[int], keys: list[Any], parent: Any
) -> list[bytes]:
    """In a worker: the batch's bytes, as the server's view would encode them."""
    service = _SERVICE
    world = service.world
    source = world.records(collection) if parent is None else world.child_view(collection, parent)
    page = LazyPage(source, positions, keys)
    return list(view_of(service, variant).encode_many(page))


class EncodePool:
    """Worker processes forked from the server's process, for one world generation."""

    def __init__(self, service: Any, workers: int) -> None:
        global _SERVICE
        _SERVICE = service  # what the fork hands to the workers
        self.generation = service.world.generation
        self.workers = workers
        self.batches = 0  # batches encoded by the workers
        self.records = 0
        self.stale = 0  # batches dropped because the world moved
        self.retired: str | None = None  # why the pool stopped being used
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_start,
            initargs=(os.getpid(),),
        )
        # With "fork" every worker is started at the first submit: now, before any server thread.
        pids = {self._pool.submit(_ready).result() for _ in range(workers)}
        self.pids = sorted(pids)
        _SERVICE = None

    def usable(self, world: Any) -> bool:
        if self._pool is None:
            return False
        if world.generation != self.generation:
            self.retire("the world changed")
            return False
        return True

    def encode(
        self, world: Any, variant: str, collection: str, page: LazyPage, parent: Any = None
    ) -> Sequence[bytes]:
        """The batch's bytes from a worker: `page` is a lazy page over `collection`'s records,
        or over the children of `parent` (`World.child_view`). Called with the world's lock
        held once; lets it go while the worker encodes and takes it back. Raises StalePage if
        the world moved."""
        assert self._pool is not None
        future = self._pool.submit(
            _encode, variant, collection, page.positions, page.page_keys, parent
        )
        world.lock.release()
        try:
            try:
                data = future.result()
            finally:
                world.lock.acquire()
        except BrokenProcessPool:
            self.retire("a worker died")
            raise StalePage from None
        if world.generation != self.generation:
            self.stale += 1
            self.retire("the world changed")
            raise StalePage
        self.batches += 1
        self.records += len(data)
        return _Exact(data)

    def retire(self, reason: str) -> None:
        """Stop using the workers (for good: they hold an older world) and let them go."""
        pool, self._pool = self._pool, None
        if pool is not None:
            self.retired = reason
            with contextlib.suppress(Exception):
                pool.shutdown(wait=False, cancel_futures=True)

    def describe(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "generation": self.generation,
            "batches": self.batches,
            "records": self.records,
            "stale": self.stale,
            "retired": self.retired,
        }
