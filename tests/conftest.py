"""Suite-wide fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.auth import forget_shared_tokens


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


def pytest_configure(config: pytest.Config) -> None:
    # `make chaos` runs with -p no:xdist, which leaves xdist's own marker unregistered.
    config.addinivalue_line("markers", "xdist_group(name): run the group on one xdist worker")
