"""Build models concurrently, each once every model it reads is built.

A build into a new file (`warehouse.build`) runs its model statements on a few cursors of the
one build connection: DuckDB lets connections of one database append to different tables at
once (optimistic concurrency: appends never conflict), and shares its memory limit and threads
among them. One model statement alone keeps ~1.6 of two cores busy (its scans, sorts and the
writes' single-threaded parts); two at once fill both (docs/benchmarks.md, session 21). Each model
commits on its own, so the models that read it see it; the build's file is published only when
every model is built, so a reader never sees a part of a build (`warehouse.build.publish`).
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import duckdb

from warehouse.models import Model

# Two statements at once on the two cores a build is given: a third adds memory, not speed.
WORKERS = 2

BuildFn = Callable[[duckdb.DuckDBPyConnection, Model], float]
SetupFn = Callable[[duckdb.DuckDBPyConnection], None]


def ready_order(models: dict[str, Model], selected: Iterable[str]) -> dict[str, int]:
    """Each selected model's rank among the ready ones, lower first: the model more selected
    models wait on (transitively) first, so the long chains (the bill lines and all that reads
    them) start early; ties in dependency order (`models`' order)."""
    chosen = set(selected)
    waiting: dict[str, set[str]] = {q: set() for q in chosen}
    for q in reversed(list(models)):  # readers before what they read
        if q not in chosen:
            continue
        for dep in models[q].deps:
            if dep in chosen:
                waiting[dep] |= waiting[q] | {q}
    position = {q: i for i, q in enumerate(models)}
    ranked = sorted(chosen, key=lambda q: (-len(waiting[q]), position[q]))
    return {q: i for i, q in enumerate(ranked)}


def build_models(
    con: duckdb.DuckDBPyConnection,
    models: dict[str, Model],
    selected: set[str],
    build: BuildFn,
    setup: SetupFn,
    workers: int | None = None,
) -> dict[str, float]:
    """Build the `selected` models with `build(cursor, model)` on up to `workers` cursors of
    `con` (each given `setup(cursor)` first: its settings and temp macros), each model after the
    selected models it reads; a model's deps outside `selected` must already be in the file.
    `workers`: default `WORKERS`. Returns each model's seconds in `models`' order. The first failure stops the build: the
    statements running are interrupted and the failure raised."""
    rank = ready_order(models, selected)
    pending = {q: {d for d in models[q].deps if d in selected} for q in selected}
    readers: dict[str, list[str]] = {q: [] for q in selected}
    for q, deps in pending.items():
        for d in deps:
            readers[d].append(q)
    cursors: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
    opened: list[duckdb.DuckDBPyConnection] = []
    for _ in range(max(1, min(workers or WORKERS, len(selected)))):
        cursor = con.cursor()
        opened.append(cursor)
        setup(cursor)
        cursors.put(cursor)

    def run(model: Model) -> float:
        cursor = cursors.get()
        try:
            return build(cursor, model)
        finally:
            cursors.put(cursor)

    seconds: dict[str, float] = {}
    ready = sorted((q for q, deps in pending.items() if not deps), key=rank.__getitem__)
    running: dict[Future[float], str] = {}
    try:
        with ThreadPoolExecutor(max_workers=len(opened), thread_name_prefix="model") as pool:
            try:
                while ready or running:
                    while ready and len(running) < len(opened):
                        q = ready.pop(0)
                        running[pool.submit(run, models[q])] = q
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        q = running.pop(future)
                        seconds[q] = future.result()  # raises the model's failure
                        for reader in readers[q]:
                            pending[reader].discard(q)
                            if not pending[reader]:
                                ready.append(reader)
                    ready.sort(key=rank.__getitem__)
            except BaseException:
                for cursor in opened:
                    cursor.interrupt()
                raise
    finally:
        for cursor in opened:
            cursor.close()
    return {q: seconds[q] for q in models if q in seconds}
