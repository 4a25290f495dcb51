"""The glibc heap counters a child interpreter reads (`mallinfo2`), for the allocator tests:
`PREAMBLE` defines `libc.mallinfo2()`, whose `hblkhd` counts the bytes in mmapped blocks and
`arena` those in the main heap."""

from __future__ import annotations

import textwrap

PREAMBLE = textwrap.dedent(
    """
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
            "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    """
)
