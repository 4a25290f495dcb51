"""The warehouse asset's refresh in a child process when the lake is large.

A run's process holds Dagster, the extraction's leftovers (freed memory the heap keeps) and then
the warehouse build, whose DuckDB takes up to its `memory_limit` (2.5 GB) on top. At large that
stacked to 3.4 GB in one process although the build alone peaks at 2.9 GB. Building in a fresh
process keeps each under 3 GB and gives the build's memory back to the system when it ends.

The child is spawned (never forked: the run's process has threads), imports only `warehouse`
and `lake`, runs `warehouse.refresh.refresh_warehouse` and hands back its result (pickled
dataclasses) or its exception, re-raised here as it was raised there. The locks it takes are
file locks, held by the child for the duration of the build as they would be by this process;
the child exits when this process dies (`assets.workers.follow_parent`), leaving at most an
unpublished `.building-*` file, as a build killed in this process would.
A small lake is refreshed in this process: spawning costs about a second of imports, more than
the memory is worth.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

from assets.workers import follow_parent

# Lakes from this size on disk are refreshed in a child process (the lake of a large run is
# 414 MB and its full build peaks at 2.9 GB; docs/benchmarks.md).
CHILD_BUILD_LAKE_BYTES = 128 * 1024 * 1024


def lake_bytes(data_dir: Path) -> int:
    """The size of the lake's files under `data_dir` (0 when there is no lake)."""
    total = 0
    stack = [Path(data_dir) / "lake"]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
    return total


def _refresh(data_dir: str, as_of: date | None, defer_merges: bool = False) -> Any:
    from warehouse.refresh import refresh_warehouse

    return refresh_warehouse(data_dir, as_of=as_of, defer_merges=defer_merges)


def refresh_in_child(
    data_dir: Path | str, *, as_of: date | None = None, defer_merges: bool = False
) -> Any:
    """`refresh_warehouse(data_dir, as_of=as_of, defer_merges=...)` in a spawned child process."""
    context = multiprocessing.get_context("spawn")
    # the child ends with this process however it ends (as the normaliser's workers do)
    with ProcessPoolExecutor(
        max_workers=1, mp_context=context, initializer=follow_parent, initargs=(os.getpid(),)
    ) as pool:
        return pool.submit(_refresh, str(data_dir), as_of, defer_merges).result()


def refresh(
    data_dir: Path | str,
    *,
    as_of: date | None = None,
    child_from: int = CHILD_BUILD_LAKE_BYTES,
    defer_merges: bool = False,
) -> Any:
    """Refresh the warehouse: in a child process when the lake holds `child_from` bytes or
    more, else here. Same result and exceptions either way. `defer_merges`: see
    `warehouse.refresh.refresh_warehouse` (the caller runs `warehouse.tidy` after it)."""
    if lake_bytes(Path(data_dir)) >= child_from:
        return refresh_in_child(data_dir, as_of=as_of, defer_merges=defer_merges)
    return _refresh(str(data_dir), as_of, defer_merges)
