"""`keep_freed_memory`: the serving process keeps the memory it frees instead of giving it back.

Every page the sandbox serves is built in buffers of hundreds of kB (a page of reservation
details is ~0.5 MB, its records' bytes and the joined body more), freed once it is sent. glibc's
malloc hands blocks that large to `mmap` and returns freed ones to the kernel (`munmap`, or
trimming the top of a heap), so the next page faults the same memory in again, zeroed: at medium
~0.5 of the read's ~1.3 kernel CPU s (the rest is the sockets). Raising the thresholds keeps such
blocks in the heaps for reuse. Used by the sandbox's own process once its world is generated, so
generation's memory is given back as before and the served memory is reused.

glibc gives each thread that allocates a heap of its own (an arena, up to 8 per core), and each
keeps what it frees up to the trim threshold: late in a large run the serving's heaps grew the
process from 2.4 to 3.0 GiB, its peak. The threads share `ARENA_MAX` heaps instead (2.9 GiB; 2.7
with the availability answers' objects given back, `sandbox.server.handlers`; docs/benchmarks.md,
session 27): they build pages holding the GIL most of the time, so they seldom wait for a heap's
lock.
"""

from __future__ import annotations

import logging

from sandbox.world.allocator import (
    M_ARENA_MAX,
    M_MMAP_THRESHOLD,
    M_TOP_PAD,
    M_TRIM_THRESHOLD,
    glibc,
    set_options,
)

_log = logging.getLogger(__name__)

# Blocks under this size come from the heaps (glibc caps the threshold at 32 MiB on 64-bit).
MMAP_THRESHOLD = 32 * 2**20
# Free memory at the top of a heap that is kept (a full read's pages reuse it) ...
TRIM_THRESHOLD = 1 * 2**30
# ... and the headroom a heap grows by at once.
TOP_PAD = 64 * 2**20
# The heaps the threads share (the main one and another).
ARENA_MAX = 2


def keep_freed_memory() -> bool:
    """Set glibc's malloc to keep freed memory for reuse (True), or leave it (False: not glibc)."""
    libc = glibc()
    if libc is None:
        _log.debug("no mallopt: the allocator is left as it is")
        return False
    settings = (
        (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        (M_TOP_PAD, TOP_PAD),
        (M_ARENA_MAX, ARENA_MAX),
    )
    return set_options(libc, settings)


__all__ = ["keep_freed_memory"]
