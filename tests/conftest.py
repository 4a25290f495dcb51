"""Suite-wide fixtures."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.auth import forget_shared_tokens

# The default world's main-job run (`full_run`), one fixture for tests/e2e and tests/serve; the
# timeout's stretch under load (tests/timeouts.py).
pytest_plugins = ["tests.pipeline_runs", "tests.timeouts"]


@pytest.fixture(autouse=True)
def _no_shared_tokens() -> Iterator[None]:
    """Each test authenticates for itself: a token cached by an earlier test never leaks in."""
    forget_shared_tokens()
    yield
    forget_shared_tokens()


@pytest.fixture(autouse=True)
def _no_stale_dagster_state_storage() -> Iterator[None]:
    """Start every test without a process-wide Dagster defs-state storage.

    Dagster 1.13 keeps the storage of the last instance entered in a context variable; when a
    test's ephemeral instance is garbage-collected, a later `dg.materialize` in the same worker
    fails with "undefined DagsterInstance weakref". Tests must not depend on each other's order.
    """
    try:
        from dagster._core.storage.defs_state.base import _current_storage
    except ImportError:  # pragma: no cover - a Dagster without the variable has no such leak
        yield
        return
    token = _current_storage.set(None)
    yield
    _current_storage.reset(token)


# SIGINT's and SIGTERM's handlers as the worker started with them (Python's KeyboardInterrupt, the
# default): every test starts with them and a child it starts inherits them.
_SIGNALS_AT_START = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


@pytest.fixture(autouse=True)
def _signals_as_found() -> Iterator[None]:
    """SIGINT's and SIGTERM's handlers as the worker started, before and after each test.

    A run of Dagster's own `execute_job` gives SIGTERM whatever SIGINT's handler is on its way
    out (`dagster._utils.interrupts`; `pipelines.runner.execute` guards against it), and a
    worker was seen with SIGINT ignored by code wider than a test (a module's fixture): every
    child started then inherited the ignored signals (tests/test_runner_signals.py and the Ctrl-C
    tests of tests/sandbox/test_process.py failed so on clean clones, docs/benchmarks.md
    session 23). Reset before each test, so fixtures set up ahead of it cannot leak in either.
    """

    def reset() -> None:
        for sig, handler in _SIGNALS_AT_START.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)

    reset()
    yield
    reset()


# Tests write their lakes, DuckDB files and Dagster instances under pytest's temporary folder.
# On a disk, the fsyncs of Dagster's SQLite storage and DuckDB's checkpoints make a small run
# wait for the disk (measured under load: 48-68 s wall on disk against 26-41 s in memory for the
# same 13-15 CPU seconds). Nothing in the suite needs its files to survive a power cut, so the
# folder goes to the memory file system when there is room; `pytest --basetemp=...` or
# RESERVOIR_TEST_TMP=disk keeps it on disk.
MEMORY_FS = Path("/dev/shm")
MEMORY_NEEDED = 4 << 30


def _memory_basetemp() -> Path | None:
    if os.environ.get("RESERVOIR_TEST_TMP") == "disk" or not MEMORY_FS.is_dir():
        return None
    try:
        if shutil.disk_usage(MEMORY_FS).free < MEMORY_NEEDED:
            return None
        root = MEMORY_FS / f"reservoir-tests-{os.getuid()}"
        root.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    # One folder per session: sessions run side by side (worktrees), and each must only remove
    # the folders of sessions that have ended, keeping the last one for a look after a failure.
    for old in root.iterdir():
        if old.name.isdigit() and not _alive(int(old.name)):
            shutil.rmtree(old, ignore_errors=True)
    return root / str(os.getpid())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.hookimpl(tryfirst=True)  # before pytest's own tmp_path factory reads the option
def pytest_configure(config: pytest.Config) -> None:
    # `make chaos` runs with -p no:xdist, which leaves xdist's own marker unregistered.
    config.addinivalue_line("markers", "xdist_group(name): run the group on one xdist worker")
    # xdist's workers get their folder from the controller
    if config.option.basetemp is None and not hasattr(config, "workerinput"):
        config.option.basetemp = _memory_basetemp()
