"""A full disk or a broken Dagster store, said in one line instead of a 93-line traceback.

Dagster records every event of a run in its SQLite storage under `RESERVOIR_DATA_DIR`; when that
disk fills up, SQLite says "disk I/O error" or "database or disk is full" from deep inside
SQLAlchemy, and the run ends with the whole stack. `explain_storage_failure` recognises it (in
the exception or anything it was raised from) and says what to do.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from pathlib import Path

LOW_SPACE_BYTES = 16 * 1024 * 1024  # below this a "disk I/O error" is taken for a full disk
_FULL_WORDS = ("database or disk is full", "no space left on device")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [e for e in (current.__cause__, current.__context__) if e is not None]
        if isinstance(current, BaseExceptionGroup):
            todo += list(current.exceptions)


def _free(path: Path) -> int | None:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return shutil.disk_usage(candidate).free
    return None


def explain_storage_failure(exc: BaseException, data_dir: Path) -> str | None:
    """One line for a run that failed because its disk is full; None for any other failure."""
    places = [data_dir / "dagster_home", data_dir / "lake", data_dir]
    lows = [(p, free) for p in places if (free := _free(p)) is not None and free < LOW_SPACE_BYTES]
    full = False
    for error in _chain(exc):
        text = str(error).lower()
        if (
            (isinstance(error, OSError) and error.errno == errno.ENOSPC)
            or any(words in text for words in _FULL_WORDS)
            or ("disk i/o error" in text and lows)
        ):
            full = True
    if not full:
        return None
    where = lows[0][0] if lows else data_dir
    free = lows[0][1] if lows else _free(data_dir) or 0
    return (
        f"the disk holding {where} is full ({free / 1048576:.1f} MiB free), so the run could not "
        "be recorded. Free space there, or point RESERVOIR_DATA_DIR at a disk with room, and run "
        "again: the lake keeps every batch it committed, and the next run continues from its "
        "cursor."
    )
