"""A process-local progress hook: extraction reports pages as they land, a display listens.

The command line shows live progress while Dagster runs the job in the same process; assets call
`report(...)` (a page landed) and `waiting(...)` (the lake's writer lock is busy) and never know
whether anyone is listening (Dagster runs from the UI have none).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class PageEvent:
    table: str
    records: int
    quarantined: int = 0
    done: bool = False


@dataclass(frozen=True)
class WaitEvent:
    """The run waits for the lake's writer lock, held by `holder` (pid, run, since); None: the
    wait is over, the run holds the lock."""

    holder: str | None


Event = PageEvent | WaitEvent
Listener = Callable[[Event], None]

_listeners: list[Listener] = []
_lock = threading.Lock()


def subscribe(listener: Listener) -> Callable[[], None]:
    """Register a listener; returns the function that removes it."""
    with _lock:
        _listeners.append(listener)

    def unsubscribe() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return unsubscribe


def report(table: str, records: int, quarantined: int = 0, *, done: bool = False) -> None:
    """Tell listeners that a page (or the end of a table) landed. Listener errors never break a run."""
    _emit(PageEvent(table, records, quarantined, done))


def waiting(holder: str | None) -> None:
    """Tell listeners that the run waits for the lake's writer lock and who holds it (None: it
    has the lock now)."""
    _emit(WaitEvent(holder))


def _emit(event: Event) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        with contextlib.suppress(Exception):  # a display must never fail an extraction
            listener(event)
