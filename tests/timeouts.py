"""pytest-timeout's limit (`timeout` in pyproject.toml) stretched by the host's load.

The limit is a hang check: a test that waits forever (a deadlocked sandbox, a socket nobody
answers) is stopped with its threads' stacks instead of holding a CI worker until the job's
own limit. It is set for a host that gives each of the suite's processes a core. On a host
where more processes want a core than it has (the load average above the cores), each gets
about cores / load of one, and a test that needs 30 CPU s on a quiet host takes that many times
longer in wall time: tests/incremental/test_inplace_equivalence.py took 304 s of wall for 58 CPU
s at load 10-12 on 2 cores and failed on the 300 s (docs/benchmarks.md, "Session 17: the test
suite's time"). So when the alarm rings, the test gets the time it was owed: the limit times
the host's 5-minute load average per core (at most `MAX_STRETCH` times). On a quiet host
nothing changes; a true hang is still stopped, after at most `MAX_STRETCH` times the limit.

Registered for the whole suite by tests/conftest.py (`pytest_plugins`). Only the `signal`
method (pytest-timeout's default on Linux, in the main thread) is stretched; the `thread`
method keeps pytest-timeout's own timer.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from types import FrameType

import pytest
import pytest_timeout

MAX_STRETCH = 4.0  # 300 s -> at most 20 minutes, under the CI job's own limit


def load_stretch() -> float:
    """The host's 5-minute load average per usable core, between 1 and `MAX_STRETCH`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    load = os.getloadavg()[1]
    return min(MAX_STRETCH, max(1.0, load / max(1, cores)))


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: pytest_timeout.Settings) -> bool | None:
    if settings.method != "signal" or threading.current_thread() is not threading.main_thread():
        return None  # pytest-timeout's own timer
    started = time.monotonic()

    def ring(signum: int, frame: FrameType | None) -> None:
        __tracebackhide__ = True
        left = settings.timeout * load_stretch() - (time.monotonic() - started)
        if left > 0:  # the host is loaded: the test is owed more wall time
            signal.setitimer(signal.ITIMER_REAL, left)
            return
        pytest_timeout.timeout_sigalrm(item, settings)

    def cancel() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    item.cancel_timeout = cancel  # type: ignore[attr-defined]  # pytest-timeout's cancel hook
    signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, settings.timeout)
    return True
