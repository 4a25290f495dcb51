"""The lake's locks: one writer at a time; compaction apart from readers that list files."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lake.store import Lake

LOCK_FILE = "writer.lock"
COMPACTION_LOCK_FILE = "compaction.lock"
DEFAULT_LOCK_TIMEOUT = 600.0


class LakeBusy(RuntimeError):
    """Another writer holds the lake lock for longer than we are willing to wait."""


# Told who holds a busy lock when the wait begins, and None once the lock is taken after it.
OnWait = Callable[[str | None], None]


@contextlib.contextmanager
def writer_lock(
    lake: Lake,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
    *,
    holder: str = "",
    on_wait: OnWait | None = None,
) -> Iterator[Path]:
    """Exclusive lake writer lock (`flock`; released by the OS if the process dies).

    `holder` names the run taking it (stamped into the lock file with the pid and the time);
    `on_wait` is told, when the lock is busy, who holds it and since when, then None once taken.
    """
    with _flocked(
        lake,
        LOCK_FILE,
        fcntl.LOCK_EX,
        timeout,
        "another run is writing to the lake ({path} is locked by {holder}); try again when it "
        "has finished",
        holder=holder,
        on_wait=on_wait,
    ) as path:
        yield path


def holder_of(path: Path) -> str:
    """Who holds a lock, as its holder stamped it ('pid 123, run abc, since ...')."""
    try:
        stamp = path.read_text().strip()
    except OSError:
        stamp = ""
    return stamp or "an unknown process"


@contextlib.contextmanager
def compaction_lock(
    lake: Lake, *, shared: bool, timeout: float | None = None
) -> Iterator[Path | None]:
    """Keeps compaction and readers that list the lake's files apart.

    A reader that lists a table's files and reads them later (the warehouse build: its views name
    the files, and a build takes seconds to a minute) holds it shared; compaction, which deletes
    the files it has replaced, holds it exclusively. Writers need not take it: they only add
    files, and they already exclude compaction through the writer lock. A lake that does not exist
    yet has nothing to compact: no lock, and no folder is made for one.
    """
    if not shared:
        lake.root.mkdir(parents=True, exist_ok=True)
    elif not lake.root.is_dir():
        yield None
        return
    message = (
        "the lake is being compacted ({path} is locked); the warehouse build waits for it - "
        "try again when the compaction has finished"
        if shared
        else "a warehouse build is reading the lake ({path} is locked); try the compaction again "
        "when it has finished"
    )
    with _flocked(
        lake,
        COMPACTION_LOCK_FILE,
        fcntl.LOCK_SH if shared else fcntl.LOCK_EX,
        DEFAULT_LOCK_TIMEOUT if timeout is None else timeout,
        message,
        stamp=not shared,
    ) as path:
        yield path


@contextlib.contextmanager
def _flocked(
    lake: Lake,
    name: str,
    mode: int,
    timeout: float,
    busy: str,
    *,
    stamp: bool = True,
    holder: str = "",
    on_wait: OnWait | None = None,
) -> Iterator[Path]:
    """`flock` on `_state/<name>` in `mode`, waiting up to `timeout` s, else `LakeBusy(busy)`."""
    folder = lake.root / "_state"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    deadline = time.monotonic() + max(timeout, 0.0)
    with open(path, "a+") as handle:
        told = False
        while True:
            try:
                fcntl.flock(handle.fileno(), mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LakeBusy(busy.format(path=path, holder=holder_of(path))) from None
                if on_wait is not None and not told:
                    told = True
                    with contextlib.suppress(Exception):  # a display never stops the wait
                        on_wait(holder_of(path))
                time.sleep(0.2)
        if told and on_wait is not None:
            with contextlib.suppress(Exception):
                on_wait(None)
        try:
            if stamp:  # who holds it, for a person (or a waiting run) looking at the lock
                handle.seek(0)
                handle.truncate()
                run = f", run {holder}" if holder else ""
                since = datetime.now(UTC).isoformat(timespec="seconds")
                handle.write(f"pid {os.getpid()}{run}, since {since}\n")
                handle.flush()
            yield path
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
