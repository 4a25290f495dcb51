"""`keep_freed_memory`: large blocks come from the heaps and stay there once freed (glibc).

Run in a child interpreter each: the allocator's settings are process-wide.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.sandbox.mallinfo import PREAMBLE

# mallinfo2's counters: bytes in mmapped blocks (hblkhd) and in the main heap (arena)
_PROBE = PREAMBLE + textwrap.dedent(
    """
    import sys
    if sys.argv[1] == "keep":
        from sandbox.heap import keep_freed_memory
        assert keep_freed_memory()
    before = libc.mallinfo2()
    block = bytearray(8 * 2**20)  # a page body's size class, and more
    during = libc.mallinfo2()
    del block
    after = libc.mallinfo2()
    print(during.hblkhd - before.hblkhd, after.arena - before.arena)
    """
)


def _probe(mode: str) -> tuple[int, int]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], check=True, capture_output=True, text=True
    ).stdout.split()
    return int(out[0]), int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_large_blocks_stay_in_the_heap_once_freed() -> None:
    mapped, kept = _probe("default")
    assert mapped >= 8 * 2**20  # glibc's default: a block this large is mmapped, then unmapped
    assert kept < 8 * 2**20
    mapped, kept = _probe("keep")
    assert mapped == 0  # from the heap ...
    assert kept >= 8 * 2**20  # ... which keeps it after the free (not trimmed)
