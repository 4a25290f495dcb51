"""A process's CPU time and peak memory, read from Linux's /proc: the one reading the benchmarks
share (a process gone raises OSError, which each caller handles as its figure needs); and the copy
of a prepared state that a benchmark times its work on."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def copy_state(state: Path, data_dir: Path) -> None:
    """Copy a prepared data dir and write the copy to disk before the clock starts: a published
    file's pages were written back long before its next refresh (the kernel's 30 s expiry), while
    a fresh copy's ~2 GB of dirty pages would be flushed by the refresh's first fsync
    (docs/benchmarks.md, session 27)."""
    shutil.copytree(state, data_dir, symlinks=True)
    os.sync()


def cpu_seconds(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU seconds of a live process so far; with `reaped`, also those of the
    children it has waited for (`cutime`, `cstime`), as a server's reaped workers count."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = fields[11:15] if reaped else fields[11:13]  # utime stime [cutime cstime]
    return sum(int(x) for x in ticks) / os.sysconf("SC_CLK_TCK")


def peak_rss_bytes(pid: int) -> int:
    """Peak resident memory (Linux `VmHWM`) of a live process; 0 when the kernel gives none."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def cpu_model() -> str:
    """The CPU's model name (Linux `/proc/cpuinfo`), or "unknown"."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"
