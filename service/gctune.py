"""The cyclic garbage collector's pace while clients read pages."""

from __future__ import annotations

import gc
import threading

# While any client is open the cyclic GC's first generation runs every GC_GEN0_WHILE_READING
# container allocations instead of CPython's 700: a page of reservation details allocates ~20k
# dicts and lists that JSON cannot link into cycles, and at 700 the collector walked them dozens
# of times per page (about 15 % of the client's CPU in `bench/extract.py`). Collections still
# happen; the thresholds found are restored when the last client closes.
GC_GEN0_WHILE_READING = 50_000
_gc_lock = threading.Lock()
_gc_users = 0
_gc_saved: tuple[int, int, int] | None = None


def relax_gc() -> None:
    global _gc_users, _gc_saved
    with _gc_lock:
        _gc_users += 1
        if _gc_users == 1:
            _gc_saved = gc.get_threshold()
            gen0, gen1, gen2 = _gc_saved
            if gen0 and gen0 < GC_GEN0_WHILE_READING:  # 0 = automatic collection disabled
                gc.set_threshold(GC_GEN0_WHILE_READING, gen1, gen2)


def restore_gc() -> None:
    global _gc_users, _gc_saved
    with _gc_lock:
        if _gc_users == 0:
            return
        _gc_users -= 1
        if _gc_users == 0 and _gc_saved is not None:
            gc.set_threshold(*_gc_saved)
            _gc_saved = None
