"""How the process allocates memory while a world is generated (`generating()`).

Generation makes and drops numpy scratch arrays of a few MB (one int64 per stay is 8 MB at
large) by the thousand. Handed to `mmap` and given back at each free, every one of them was
faulted in again, zeroed, page by page: at large ~4.2M page faults, 7.7-11 of the generation's
~27 CPU s in the kernel (docs/benchmarks.md, "Session 23"). While generating, blocks under
`MMAP_THRESHOLD` come from the heap and what is freed stays there for the next array; larger
ones (the stay nights' columns) are still mapped and unmapped, and the heap's free memory goes
back between the large phases (`release`), which keeps the peak near what it was. numpy's transparent huge pages are off meanwhile: on a host whose huge pages are
defragmented on demand, faulting them in cost more kernel time than it saved.

On leaving, the heap's free memory goes back to the OS (`malloc_trim`), and the allocator is
left as before this module: blocks of 1 MiB and more mapped (so later scratch memory is given
back at once), glibc's default trim threshold and top pad, numpy's huge pages as they were.
Nothing happens where glibc's `mallopt` is missing.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
from collections.abc import Iterator

import numpy as np

# glibc's <malloc.h>
M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

MIB = 2**20
# while generating: blocks under 16 MiB from the heap, whose free top is kept up to 1 GiB
GENERATING = ((M_MMAP_THRESHOLD, 16 * MIB), (M_TRIM_THRESHOLD, 1024 * MIB), (M_TOP_PAD, 64 * MIB))
# afterwards: 1 MiB and more mapped (freed memory goes back at once), glibc's defaults else
AFTER = ((M_MMAP_THRESHOLD, 1 * MIB), (M_TRIM_THRESHOLD, 128 * 1024), (M_TOP_PAD, 128 * 1024))


def glibc() -> ctypes.CDLL | None:
    """The C library with `mallopt` and `malloc_trim` typed; None where they are missing."""
    with contextlib.suppress(OSError, TypeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim"):
            libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
            libc.mallopt.restype = ctypes.c_int
            libc.malloc_trim.argtypes = (ctypes.c_size_t,)
            libc.malloc_trim.restype = ctypes.c_int
            return libc
    return None


def set_options(libc: ctypes.CDLL, settings: tuple[tuple[int, int], ...]) -> bool:
    """`mallopt` each (option, value); True when glibc took every one."""
    return all(libc.mallopt(option, value) == 1 for option, value in settings)


def _huge_pages(enabled: bool) -> bool | None:
    """Turn numpy's `madvise(MADV_HUGEPAGE)` of large arrays on or off; the previous setting
    (None where numpy has no such switch)."""
    switch = getattr(np._core.multiarray, "_set_madvise_hugepage", None)
    return None if switch is None else bool(switch(enabled))


def release() -> None:
    """Give the heap's free memory back to the OS now: between generation's large phases, so
    the next one does not peak on top of the last one's freed scratch (no-op but on glibc)."""
    libc = glibc()
    if libc is not None:
        libc.malloc_trim(0)


@contextlib.contextmanager
def generating() -> Iterator[bool]:
    """The allocator set for generation inside the block (True), or left alone (False: not
    glibc); afterwards the freed memory is given back and the settings are as described above."""
    libc = glibc()
    if libc is None:
        yield False
        return
    huge = _huge_pages(False)
    try:
        yield set_options(libc, GENERATING)
    finally:
        libc.malloc_trim(0)
        set_options(libc, AFTER)
        if huge is not None:
            _huge_pages(huge)


__all__ = ["AFTER", "GENERATING", "generating", "glibc", "release", "set_options"]
