"""Benchmark: the in-place refresh after one hour of changes, per model, within a day and across
midnight, on lake states kept on disk so that a refresh can be repeated (and profiled).

    python -m bench.refresh_hour prepare --scale medium --dir /tmp/refresh-medium
    python -m bench.refresh_hour refresh /tmp/refresh-medium/hour    # within a day
    python -m bench.refresh_hour refresh /tmp/refresh-medium/day     # the hour across midnight

`prepare` loads a lake from a sandbox world served by a child process, builds the
warehouse, lets the world advance one hour and lands it with an incremental run: a copy of that
data dir (before its refresh) is `hour`. It then refreshes, advances to the last hour of the day,
lands and refreshes, advances one hour across midnight and lands it: a copy is `day`.
`refresh` copies such a state and refreshes the copy in this process (`refresh_warehouse`, in
place, its row-group merges deferred as Dagster's warehouse asset does); it prints the CPU seconds
of the refresh (user + system, `resource.getrusage`) and its wall seconds (the marts published),
then the tidy's after it (`warehouse.tidy`: the merges, where nobody waits) and, per model
rebuilt, how (by key, by sums or whole) and its CPU seconds (`--as-of` moves the business date,
as across midnight). The world is seeded, so the states of two
checkouts compare (run `prepare` in each: the file must be built by the SQL
that refreshes it, or every changed model is rebuilt whole; `--stamp-from REV` takes a state
prepared at git REV as built by this checkout for the models whose SQL and macros are the same
but for comments, such as their `-- incremental` headers: `bench.stamp_versions`).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from datetime import date, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.models import HORIZON_DAYS, _today, build_in_child, load_lake
from bench.proc import copy_state


def _advance(sb: Any, hours: float) -> datetime:
    """Move the sandbox's clock (in its own process: through its admin API); its new time."""
    import httpx

    answer = httpx.post(f"{sb.admin_url}/advance", params={"hours": hours}, timeout=900)
    answer.raise_for_status()
    return datetime.fromisoformat(answer.json()["now"])


def _land(sb: Any, opener: Any, data_dir: Path, hours: float) -> None:
    from assets.modes import apply_changes
    from assets.settings import IngestSettings
    from lake.store import Lake

    _advance(sb, hours)
    settings = IngestSettings(today=_today(sb), horizon_days=HORIZON_DAYS)
    report = apply_changes(Lake(data_dir / "lake"), opener, settings)
    print(f"  +{hours} h landed: {sorted(report.tables)}")


def prepare(scale: str, seed: int, out: Path) -> None:
    from sandbox.process import run_sandbox_process
    from sandbox.settings import SandboxSettings

    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} is not empty: give an empty (or new) --dir")
    data_dir = out / "data"
    data_dir.mkdir(parents=True)
    # the sandbox in a process of its own: in a thread of this one it shares the GIL with the
    # client, and on a busy host it did not answer a large availability page within the
    # client's read timeout (session 12); RESERVOIR_TIMEOUT raises that timeout
    with run_sandbox_process(SandboxSettings(seed=seed, scale=scale)) as sb:
        _, opener = load_lake(data_dir, sb)
        build_in_child("refresh", data_dir, _today(sb))
        _land(sb, opener, data_dir, 1)
        shutil.copytree(data_dir, out / "hour", symlinks=True)
        build_in_child("refresh", data_dir, _today(sb))
        to_last_hour = 23 - _advance(sb, 0).hour
        _land(sb, opener, data_dir, to_last_hour)
        build_in_child("refresh", data_dir, _today(sb))
        _land(sb, opener, data_dir, 1)
        shutil.copytree(data_dir, out / "day", symlinks=True)
    shutil.rmtree(data_dir)
    print(f"states: {out / 'hour'} (within a day), {out / 'day'} (across midnight)")


def refresh(state: Path, stamp_from: str | None = None, as_of: date | None = None) -> None:
    import pandas  # noqa: F401
    import pyarrow.dataset  # noqa: F401

    import warehouse.maintain
    from warehouse.refresh import refresh_warehouse
    from warehouse.tidy import tidy_warehouse

    # Imported before the clock starts, as in the process of Dagster's warehouse step (its code
    # location imports pandas): the lake's first `pq.read_table` imports `pyarrow.dataset`, and
    # that pandas (~0.45 s cold), which the step has loaded already (session 24).

    # each model's seconds in CPU (user + system of every thread) rather than wall: the host is
    # shared, and a model's wall seconds there say more about the load than about the model
    cpu = SimpleNamespace(perf_counter=time.process_time)
    warehouse.maintain.time = cpu  # type: ignore[attr-defined]

    with tempfile.TemporaryDirectory(prefix="bench-refresh-") as tmp:
        work = Path(tmp) / "data"
        copy_state(state, work)
        if stamp_from is not None:
            from bench.stamp_versions import stamp_from_rev

            stamped = stamp_from_rev(work, stamp_from)
            print(f"stamped (built at {stamp_from} as this checkout builds it): {stamped}")
        t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        # as Dagster's warehouse asset runs it: the marts published, the merges left to the tidy
        result = refresh_warehouse(work, as_of=as_of, defer_merges=True)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.perf_counter() - t0
        tidied = tidy_warehouse(work) if result is not None else None
    if result is None:
        raise SystemExit("nothing to refresh in that state")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    hows = list(result.refreshed.values())
    print(
        f"refresh: {wall:.2f} s wall, {cpu:.2f} CPU s; {hows.count('keys')} models by key, "
        f"{hows.count('sums')} by sums, {hows.count('whole')} whole"
    )
    if tidied is not None:  # after the marts are published: nobody waits on it
        print(
            f"tidy after it: {tidied.seconds:.2f} s wall, {tidied.cpu_seconds:.2f} CPU s; "
            f"deleted rows stored {tidied.deleted_rows_before:,} -> {tidied.deleted_rows_after:,}"
            + ("" if tidied.merged else f" (skipped: {tidied.skipped})")
        )
    for seconds, q in sorted(((m.seconds, q) for q, m in result.models.items()), reverse=True):
        print(f"  {seconds:7.2f}  {result.refreshed.get(q, ''):6}  {q}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare", help="lake states after one hour, on disk")
    prep.add_argument("--scale", default="medium", choices=["small", "medium", "large"])
    prep.add_argument("--seed", type=int, default=7)
    prep.add_argument("--dir", type=Path, required=True)
    again = sub.add_parser("refresh", help="refresh a copy of a prepared state")
    again.add_argument("state", type=Path)
    again.add_argument(
        "--as-of",
        type=date.fromisoformat,
        help="refresh as of this business date (e.g. the day after the state's, for the "
        "hour's changes with the date moving, as across midnight)",
    )
    again.add_argument(
        "--stamp-from",
        metavar="REV",
        help="a state prepared by the code at git REV: models whose SQL changed since only in "
        "comments (and whose macros did not) are taken as built by this checkout's (else they "
        "are rebuilt whole once)",
    )
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args.scale, args.seed, args.dir)
    else:
        refresh(args.state, args.stamp_from, args.as_of)


if __name__ == "__main__":
    main()
