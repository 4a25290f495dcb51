"""`keep_freed_memory`: large blocks come from the heaps and stay there once freed, in at most
`ARENA_MAX` heaps however many threads serve (glibc).

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


def _child(script: str, mode: str) -> list[int]:
    """The integers `script` prints, run in a child interpreter with `mode` as its argument."""
    out = subprocess.run(
        [sys.executable, "-c", script, mode], check=True, capture_output=True, text=True
    )
    return [int(x) for x in out.stdout.split()]


def _probe(mode: str) -> tuple[int, int]:
    mapped, kept = _child(_PROBE, mode)
    return mapped, kept


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_large_blocks_stay_in_the_heap_once_freed() -> None:
    mapped, kept = _probe("default")
    assert mapped >= 8 * 2**20  # glibc's default: a block this large is mmapped, then unmapped
    assert kept < 8 * 2**20
    mapped, kept = _probe("keep")
    assert mapped == 0  # from the heap ...
    assert kept >= 8 * 2**20  # ... which keeps it after the free (not trimmed)


# eight threads each take and free a block at once: glibc gives each thread a heap of its own
# (an arena) up to its limit; `malloc_info` lists the heaps
_THREADS = PREAMBLE + textwrap.dedent(
    """
    import os, sys, tempfile, threading
    if sys.argv[1] == "keep":
        from sandbox.heap import keep_freed_memory
        assert keep_freed_memory()
    start = threading.Barrier(8)
    def serve():
        start.wait()
        block = bytearray(4 * 2**20)
        start.wait()  # all eight hold theirs at once
        del block
    threads = [threading.Thread(target=serve) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    libc.fopen.restype = ctypes.c_void_p
    libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
    libc.fclose.argtypes = (ctypes.c_void_p,)
    with tempfile.NamedTemporaryFile(suffix=".xml") as f:
        fp = libc.fopen(f.name.encode(), b"w")
        libc.malloc_info(0, fp)
        libc.fclose(fp)
        print(open(f.name).read().count("<heap nr="))
    """
)


def _heaps(mode: str) -> int:
    (heaps,) = _child(_THREADS, mode)
    return heaps


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_the_serving_threads_share_at_most_arena_max_heaps() -> None:
    """Each heap keeps up to 1 GiB it freed (the trim threshold): one per serving thread put a
    large world's sandbox over 3 GB (docs/benchmarks.md, session 27)."""
    from sandbox.heap import ARENA_MAX

    assert _heaps("default") > ARENA_MAX + 1  # glibc's default: a heap per thread, and more
    assert _heaps("keep") <= ARENA_MAX


# the sandbox's serving allocator on, an availability answer of 31 arrival dates x 60 durations
# (~100 MB of Python objects at small scale) after a first call that fills the world's caches;
# "kept": the handler's `release` switched off, to show what it gives back
_AVAILABILITY = textwrap.dedent(
    """
    import sys
    from datetime import timedelta
    from pathlib import Path
    import httpx
    import sandbox.server.handlers as handlers
    from sandbox.heap import keep_freed_memory
    from sandbox.runner import run_sandbox
    from sandbox.settings import SandboxSettings

    def rss():
        status = Path("/proc/self/status").read_text().splitlines()
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS"))

    if sys.argv[1] == "kept":
        handlers.release = lambda: None
    with run_sandbox(SandboxSettings(seed=7, scale="small")) as sb:
        assert keep_freed_memory()
        with httpx.Client(base_url=sb.base_url, timeout=120) as client:
            token = client.post("/authenticate", data={
                "grantType": "client_credentials", "clientId": sb.client_id,
                "clientSecret": sb.client_secret, "scope": sb.scope}).json()
            client.headers["Authorization"] = f"{token['token_type']} {token['access_token']}"
            day = sb.world.now.date()
            path = "/accommodationtypes/availability"
            client.get(path, params={"arrivalDateFrom": day.isoformat()}).raise_for_status()
            before = rss()
            params = [("arrivalDateFrom", day.isoformat()),
                      ("arrivalDateTo", (day + timedelta(days=30)).isoformat())]
            params += [("duration", str(d)) for d in range(1, 61)]
            answer = client.get(path, params=params)
            answer.raise_for_status()
            size = len(answer.content)
            del answer
            print(rss() - before, size)
    """
)


def _availability_growth(mode: str) -> tuple[int, int]:
    grown, size = _child(_AVAILABILITY, mode)
    return grown, size


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_an_availability_answer_gives_back_its_objects() -> None:
    """The serving's heaps keep what they free (above): the ~300 MB of Python objects an
    availability answer of 31 arrival dates makes at large would stay resident, so the handler
    gives them back once the answer is encoded (docs/benchmarks.md, session 27)."""
    grown, size = _availability_growth("given back")
    kept, _ = _availability_growth("kept")
    assert size > 5 * 2**20  # a large answer: its objects are several times its bytes
    assert kept > grown + 40 * 2**20  # what the release gives back (~90 MiB here)
    assert grown < 64 * 2**20  # the body and the threads' buffers, not the objects
