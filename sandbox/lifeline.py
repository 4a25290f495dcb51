"""A child process's tie to its parent: it ends when the parent does.

Used by the sandbox's own child process (`sandbox/process.py`) and by its encode workers
(`sandbox/server/encode_pool.py`); below both, so neither imports the other.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies


def die_with(parent: int) -> None:
    """In the child: ask Linux for SIGTERM when the parent dies (no-op elsewhere), and leave
    at once if it already has."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(0)
