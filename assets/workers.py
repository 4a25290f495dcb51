"""Worker processes that decode and normalise pages for `assets.extract.run_spec`.

One pool per process, started on first need and reused by later specs and runs
(`shared_pool`): one single-process executor per worker (`Pool`), so that work can be sent to
the very worker that holds a landing's rows. A worker gets a `Job` (which spec, batch and PII
setting) and a page, which arrives undecoded when it is `LazyRecords` (it pickles as its bytes),
and returns a `PageResult` (`normalise_page`: the same function the run's own thread uses, so
both paths behave alike). Its Arrow tables cross back as Arrow IPC streams (`Shipped`), not
pickled table by table; or, for a landing that streams its rows to the lake, the worker writes
them as parts itself and sends back only the part files (`assets.worker_writes`).
Specs hold callables and do not pickle: a worker looks its spec up by name (`SPECS_BY_NAME`), so
only registered specs are sent to the pool (`registered`).

Workers start by "forkserver" (never fork: the page stream's event loop thread is running),
which imports the main module in each worker: a script that calls `run_spec` must do so under
`if __name__ == "__main__":`. Each worker follows the run's process and ends with it, however it
ends (`follow_parent`).
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import itertools
import logging
import multiprocessing
import os
import pickle
import select
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from datetime import datetime
from typing import Any, NamedTuple

import pyarrow as pa

from assets.catalogue import SPECS
from assets.endpoints import EndpointSpec
from assets.normalise import Normalised, Normaliser
from service.lazy import LazyRecords

log = logging.getLogger("assets.workers")
MAX_AUTO_WORKERS = 4
START_METHOD = "forkserver"  # never fork: the page stream's event loop thread is running
PARENT_POLL_SECONDS = 2.0  # a worker checks this often whether the run's process still lives

Record = dict[str, Any]


class NormaliseWorkerDied(RuntimeError):
    """A normaliser worker process ended abruptly; the table's batch was not committed."""


class NormaliseWorkerError(RuntimeError):
    """An error in a normaliser worker that could not be sent back as itself (not picklable)."""


def worker_count(setting: int | None) -> int:
    """Worker processes for a `normalise_workers` setting (None = one per core, see below)."""
    if setting is None:
        try:
            cores = len(os.sched_getaffinity(0))  # the cores this process may run on
        except AttributeError:  # pragma: no cover - not on Linux
            cores = os.cpu_count() or 1
        # One per core: the process that fetches needs well under a core once it no longer
        # decodes (`python -m bench.workers` at medium scale on 2 vCPUs: 2 workers 11.0-11.1 s,
        # 1 worker 13.9-14.7 s, none 14.1-14.4 s); with one core a worker only adds transfers.
        return 0 if cores < 2 else min(MAX_AUTO_WORKERS, cores)
    if setting < 0:
        raise ValueError(
            f"normalise_workers must be 0 or more (or None = automatic), got {setting}"
        )
    return setting


class Written(NamedTuple):
    """What a worker that writes a landing's rows itself sends back instead of its tables: the
    parts it staged (table -> (temp file, rows); none until a part fills) and, for a full
    batch's removal guard, the root rows' guard columns (an Arrow IPC stream)."""

    parts: dict[str, list[tuple[str, int]]]
    keys: bytes | None = None


class PageResult(NamedTuple):
    """One page as the asset thread applies it: the page's cursor candidate (the largest
    integer `cursor_field`, before `record_filter`) and its normalised tables (None when the
    filter left no record); `written`: the parts a worker wrote of them (then `normalised`
    holds no good rows: they are in those parts)."""

    cursor: int | None
    normalised: Normalised | None
    written: Written | None = None


def normalise_page(
    spec: EndpointSpec, normaliser: Normaliser, page: Sequence[Record], extracted_at: datetime
) -> PageResult:
    """Take the cursor candidate, filter and normalise one page. A `LazyRecords` page is decoded
    here only when a cursor or filter needs its records; else the normaliser reads its bytes."""
    records = page if isinstance(page, list | LazyRecords) else list(page)
    if spec.cursor_field is not None or spec.record_filter is not None:
        records = list(records)  # decodes a `LazyRecords`
    top: int | None = None
    if spec.cursor_field is not None:
        seen = [r.get(spec.cursor_field) for r in records]
        top = max((v for v in seen if isinstance(v, int)), default=None)
    if spec.record_filter is not None:
        records = [r for r in records if spec.record_filter(r)]
    if not records:
        return PageResult(top, None)
    return PageResult(top, normaliser.normalise(records, extracted_at))


SPECS_BY_NAME: dict[str, EndpointSpec] = {s.name: s for s in SPECS}


def registered(spec: EndpointSpec) -> bool:
    """Whether a worker can find this very spec by its name."""
    return SPECS_BY_NAME.get(spec.name) is spec


class Job(NamedTuple):
    """What a worker needs besides the page to normalise it as `run_spec` would; and, when it
    writes the rows itself (`assets.worker_writes`), each table's folder, the part size and the
    guard columns of a full batch."""

    spec: str
    batch_id: str
    batch_kind: str
    include_pii: bool
    folders: tuple[tuple[str, str], ...] = ()  # (table, folder): the worker writes the parts
    flush_rows: int = 0
    guard: tuple[str, ...] = ()


def worker_normaliser(job: Job) -> Normaliser:
    return _normaliser(job.spec, job.batch_id, job.batch_kind, job.include_pii)


@functools.lru_cache(maxsize=16)
def _normaliser(spec: str, batch_id: str, batch_kind: str, include_pii: bool) -> Normaliser:
    return Normaliser(
        SPECS_BY_NAME[spec], batch_id=batch_id, batch_kind=batch_kind, include_pii=include_pii
    )


class _Ipc(NamedTuple):
    """One Arrow table as an IPC stream (its schema, then its record batches)."""

    stream: bytes


def _to_ipc(value: Any) -> Any:
    if isinstance(value, pa.Table):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, value.schema) as writer:
            writer.write_table(value)
        return _Ipc(sink.getvalue().to_pybytes())
    if isinstance(value, dict) and value and all(isinstance(v, pa.Table) for v in value.values()):
        return {k: _to_ipc(v) for k, v in value.items()}
    return value


def _from_ipc(value: Any) -> Any:
    if isinstance(value, _Ipc):
        return pa.ipc.open_stream(value.stream).read_all()
    if isinstance(value, dict) and value and all(isinstance(v, _Ipc) for v in value.values()):
        return {k: _from_ipc(v) for k, v in value.items()}
    return value


def _arrive(fields: dict[str, Any]) -> Normalised:
    return Normalised(**{name: _from_ipc(value) for name, value in fields.items()})


class Shipped(Normalised):
    """A page's `Normalised` as a worker sends it back: unpickled, a plain `Normalised` with
    the same tables (schemas, chunks and values), which crossed as Arrow IPC streams.

    Pickling an Arrow table goes column by column; a page of 100 reservation details (four
    tables, ~1,300 rows) took 1.3-1.6 ms to pickle in the worker and 0.6-0.9 ms to unpickle in
    the run's process, against 0.5-0.7 and 0.16-0.21 ms as IPC streams (`python -m
    bench.transfer`; docs/benchmarks.md, "Session 16: the pipeline process end to end")."""

    def __reduce__(self) -> tuple[Any, ...]:
        fields = {f.name: _to_ipc(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return (_arrive, (fields,))


def shipped(result: PageResult) -> PageResult:
    """`result` with its tables to be sent as IPC streams when it is pickled."""
    if result.normalised is None:
        return result
    fields = {f.name: getattr(result.normalised, f.name) for f in dataclasses.fields(Normalised)}
    return PageResult(result.cursor, Shipped(**fields), result.written)


def table_bytes(table: pa.Table) -> bytes:
    """A table as an Arrow IPC stream (`bytes_table` reads it back)."""
    ipc = _to_ipc(table)
    assert isinstance(ipc, _Ipc)
    return ipc.stream


def bytes_table(stream: bytes) -> pa.Table:
    return pa.ipc.open_stream(stream).read_all()


def normalise_in_worker(job: Job, page: Sequence[Record], extracted_at: datetime) -> PageResult:
    """Runs in a worker process: the page arrives undecoded (`LazyRecords`) and is decoded here;
    the result goes back with its tables as IPC streams (`Shipped`)."""
    try:
        spec = SPECS_BY_NAME[job.spec]
        return shipped(normalise_page(spec, worker_normaliser(job), page, extracted_at))
    except Exception as exc:
        check_sendable(exc)
        raise


def check_sendable(exc: Exception) -> None:
    """In a worker: raise `NormaliseWorkerError` (as text) for an error that cannot travel back
    pickled; one that cannot would break the whole pool."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        detail = "".join(traceback.format_exception(exc)).rstrip()
        raise NormaliseWorkerError(
            f"{type(exc).__name__}: {exc} (in a normaliser worker)\n{detail}"
        ) from None


class Pool:
    """Worker processes, each an executor of its own: `submit_to` sends work to one of them
    (work sent to one worker runs in the order it was sent), `submit` to the next in turn."""

    def __init__(self, workers: int) -> None:
        self.executors = [
            ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context(START_METHOD),
                initializer=follow_parent,
                initargs=(os.getpid(),),
            )
            for _ in range(workers)
        ]
        self._turn = itertools.count()

    def __len__(self) -> int:
        return len(self.executors)

    def submit_to(self, worker: int, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        return self.executors[worker].submit(fn, *args)

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        return self.submit_to(next(self._turn) % len(self.executors), fn, *args)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for executor in self.executors:
            executor.shutdown(wait=wait, cancel_futures=cancel_futures)


_pool_lock = threading.Lock()
_pool: Pool | None = None
_pool_size = 0
_exit_hook = False


def pool_running() -> bool:
    """Whether this process's worker pool has been started (and not shut down)."""
    return _pool is not None


def shared_pool(workers: int) -> Pool:
    """This process's worker pool (created on first need, replaced when the size changes)."""
    global _pool, _pool_size, _exit_hook
    with _pool_lock:
        if _pool is None or _pool_size != workers:
            if _pool is not None:
                _pool.shutdown(wait=False)  # work already submitted still completes
            if not _exit_hook:
                atexit.register(shutdown_pool)
                _exit_hook = True
            _pool = Pool(workers)
            _pool_size = workers
            log.info("normalising pages in %d worker process(es)", workers)
        return _pool


def follow_parent(pid: int) -> None:
    """Worker start-up: exit when the run's process `pid` ends, however it ends.

    A pool's workers wait for work on a pipe they also hold open, so a run killed with SIGKILL
    (or by the OOM killer) would leave them, and the forkserver, idle forever. A daemon thread
    waits on a pidfd of the run's process (polls where pidfds are missing) and ends the worker.
    """
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # pragma: no cover - not Linux >= 5.3
        handle = None

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])
        else:  # pragma: no cover - not Linux >= 5.3
            while True:
                time.sleep(PARENT_POLL_SECONDS)
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
        os._exit(0)

    threading.Thread(target=watch, name="follow-run-process", daemon=True).start()


def discard_pool(pool: Pool | None) -> None:
    """Forget a broken pool so the next spec or run starts a new one."""
    global _pool, _pool_size
    with _pool_lock:
        if pool is not None and pool is _pool:
            _pool, _pool_size = None, 0
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def shutdown_pool() -> None:
    global _pool, _pool_size
    with _pool_lock:
        pool, _pool, _pool_size = _pool, None, 0
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def died_message(table: str, exc: BaseException) -> str:
    return (
        f"table {table!r}: a normaliser worker process ended abruptly while normalising pages "
        f"({exc}; killed, out of memory or crashed); nothing of this table was committed in this "
        "run (records quarantined so far are kept). The next run starts new workers; set "
        "normalise_workers=0 to normalise in the asset's own process."
    )
