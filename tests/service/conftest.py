from __future__ import annotations

from collections.abc import Iterator

import pytest
import stamina

from service.throttle import ConcurrencyLimiter
from tests.service.fakes import FakeService


@pytest.fixture(autouse=True)
def _fast_retries() -> Iterator[None]:
    """No backoff sleeps in unit tests; the client's own attempt bound still applies (cap)."""
    with stamina.set_testing(True, attempts=50, cap=True):
        yield


@pytest.fixture
def fake() -> FakeService:
    return FakeService()


@pytest.fixture
def limiter() -> ConcurrencyLimiter:
    """A private cap per test, so tests never share the process-wide registry."""
    return ConcurrencyLimiter(15)
