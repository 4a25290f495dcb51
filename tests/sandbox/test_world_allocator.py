"""`allocator.generating`: while a world is generated, scratch arrays of a few MB come from the
heap and are reused once freed; afterwards the allocator is left as before (large blocks mapped
again, numpy's huge pages as they were).

Run in a child interpreter each: the allocator's settings are process-wide.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.sandbox.mallinfo import PREAMBLE

_PROBE = PREAMBLE + textwrap.dedent(
    """
    import json
    import numpy as np

    switch = np._core.multiarray._set_madvise_hugepage

    def huge():
        now = switch(True)
        switch(now)
        return bool(now)

    def block():
        before = libc.mallinfo2()
        a = np.ones(2**20)  # 8 MiB: one int64 or float per stay at large
        during = libc.mallinfo2()
        del a
        after = libc.mallinfo2()
        return during.hblkhd - before.hblkhd, after.arena - before.arena

    from sandbox.world.allocator import generating

    out = {"huge_before": huge()}
    with generating() as set_:
        out["set"] = set_
        out["huge_inside"] = huge()
        out["inside"] = block()
        out["inside_again"] = block()
    out["huge_after"] = huge()
    out["after"] = block()
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_generation_reuses_scratch_memory_and_leaves_the_allocator_as_it_was() -> None:
    import json

    out = json.loads(
        subprocess.run(
            [sys.executable, "-c", _PROBE], check=True, capture_output=True, text=True
        ).stdout
    )
    assert out["set"] is True
    mapped, kept = out["inside"]
    assert mapped == 0  # from the heap ...
    assert kept >= 8 * 2**20  # ... which keeps it once freed, for the next array
    mapped, grown = out["inside_again"]
    assert mapped == 0 and grown == 0  # the freed memory is reused: the heap does not grow
    assert out["huge_inside"] is False
    assert out["huge_after"] == out["huge_before"]  # numpy's setting restored
    mapped, kept = out["after"]
    assert mapped >= 8 * 2**20  # afterwards: mapped, and given back at once
    assert kept < 8 * 2**20
