"""Benchmark: an incremental run after N hours of changes next to a full refresh, and freshness.

    python -m bench.incremental --scale medium --latency-ms 20
    python -m bench.incremental --scale small --rounds 3          # quick run

1. Full refresh (the bootstrap: mark, full snapshot, cursor) into data dir A, warehouse built.
2. The sandbox advances `--hours` (bookings, status moves, payments, merges, rate changes...).
3. Incremental run into A (events -> refetch -> delta batches -> cursor), then the warehouse
   models that depend on the changed tables; requests and wall time of each.
4. A full refresh of the same state into data dir B, for comparison.
5. Freshness: the sensor's logic (`poll_high_water` + `feed_decision`, then the run) loops every
   `--poll` seconds in a thread while the sandbox makes changes; for each change, the time from
   the change to the warehouse showing it (a changed reservation's `modified_at` in the
   published warehouse equals the service's).

`--no-compare` skips steps 2-4 (freshness only, after the bootstrap). `--from-state DIR` skips
steps 1-4: the data dir of a state prepared by `bench.refresh_hour prepare` (same seed and
scale, its `hour`: the world advanced `--hours` after its start and landed) is copied, the new
sandbox is advanced as many hours, the lake's cursor must equal the feed's newest event (else
the state is not this world's and the bench stops), and the copy's warehouse is refreshed
before the sensor loop starts. Each freshness sample is split into the wait for the run that
showed it to start (poll interval, or a run in progress), its landing and its warehouse refresh.

The sandbox runs in a child process (its CPU work does not share our GIL) with a fixed latency
per request (`sandbox_process.py`); the sensor loop and the freshness samples are in
`incremental_freshness.py`. Results: a table on stdout and JSON in bench/out/.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assets.modes import apply_changes
from assets.settings import IngestSettings
from bench.incremental_freshness import freshness
from bench.proc import copy_state
from bench.sandbox_process import Sandbox, start_sandbox
from lake.state import read_cursor
from lake.store import Lake
from pipelines.sensors import poll_high_water
from warehouse.refresh import refresh_warehouse

OUT_DIR = Path(__file__).parent / "out"


def _timed_build(data_dir: Path) -> tuple[float, int]:
    t = time.perf_counter()
    result = refresh_warehouse(data_dir)
    return time.perf_counter() - t, len(result.models) if result is not None else 0


def _apply(sb: Sandbox, data_dir: Path) -> tuple[Any, dict[str, Any]]:
    """One `apply_changes` run on `data_dir` (a bootstrap when its lake is empty) + the build."""
    report = apply_changes(
        Lake(data_dir / "lake"), sb.resource().open_client, IngestSettings(today=sb.today())
    )
    build_s, models = _timed_build(data_dir)
    return report, {
        "requests": report.requests,
        "seconds": round(report.seconds, 2),
        "warehouse_seconds": round(build_s, 2),
        "models_built": models,
    }


def full_refresh(sb: Sandbox, data_dir: Path) -> dict[str, Any]:
    return _apply(sb, data_dir)[1]


def incremental(sb: Sandbox, data_dir: Path) -> dict[str, Any]:
    report, figures = _apply(sb, data_dir)
    return {
        **figures,
        "events": report.plan.get("events"),
        "plan": report.plan,
        "tables": sorted(report.tables),
        "day_rolled": report.day_rolled,
    }


def from_state(
    sb: Sandbox, state: Path, data_dir: Path, hours: float, stamp_from: str | None = None
) -> dict[str, Any]:
    """A copy of a prepared state as the data dir, the sandbox moved to its hour, the copy's
    warehouse refreshed; stops when the state's cursor is not the sandbox's newest event.
    `stamp_from`: the git revision whose code built the state; the copy's model versions are
    re-recorded as this checkout's where the SQL is the same (`bench.stamp_versions`), so the
    first refresh maintains them instead of rebuilding them whole. Stamp the copy, never the
    prepared state: a state stamped in place refreshed 0.6 s slower in wall (docs/benchmarks.md,
    session 24)."""
    print(f"copying {state} and advancing the sandbox {hours} h ...", file=sys.stderr)
    copy_state(state, data_dir)
    if stamp_from is not None:
        from bench.stamp_versions import stamp_from_rev

        stamped = stamp_from_rev(data_dir, stamp_from)
        print(f"stamped {len(stamped)} models as built at {stamp_from}", file=sys.stderr)
    sb.admin("POST", "/advance", hours=hours)
    cursor = read_cursor(Lake(data_dir / "lake"))
    newest = poll_high_water(sb.resource())
    if cursor is None or cursor.event_id != newest:
        raise SystemExit(
            f"{state}: its lake's cursor ({cursor.event_id if cursor else None}) is not the "
            f"sandbox's newest event ({newest}) after {hours} h: give the `hour` state of the "
            "same seed and scale, and its hours"
        )
    seconds, _ = _timed_build(data_dir)
    return {"state": str(state), "cursor": newest, "refresh_seconds": round(seconds, 2)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="medium", choices=["small", "medium", "large"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--hours", type=float, default=1.0, help="changes before the run")
    parser.add_argument("--rounds", type=int, default=5, help="freshness samples")
    parser.add_argument("--poll", type=float, default=1.0, help="sensor interval (s)")
    parser.add_argument(
        "--step-hours", type=float, default=0.25, help="simulated hours per freshness change"
    )
    parser.add_argument("--gap", type=float, default=2.0, help="wall seconds between changes")
    parser.add_argument(
        "--no-compare",
        action="store_true",
        help="freshness only: no incremental run and full refresh to compare (steps 2-4)",
    )
    parser.add_argument(
        "--from-state",
        type=Path,
        help="bootstrap from a copy of this prepared state (`bench.refresh_hour prepare`'s "
        "`hour`, same seed and scale, `--hours` after the world's start): freshness only",
    )
    parser.add_argument(
        "--stamp-from",
        metavar="REV",
        help="with --from-state: the git revision whose code built the state (its copy's model "
        "versions re-recorded as this checkout's where the SQL is the same)",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    result: dict[str, Any] = {
        "scale": args.scale,
        "seed": args.seed,
        "latency_ms": args.latency_ms,
        "hours": args.hours,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    with (
        start_sandbox(args.scale, seed=args.seed, latency_ms=args.latency_ms) as sb,
        tempfile.TemporaryDirectory(prefix="bench-incremental-") as tmp,
    ):
        dir_a, dir_b = Path(tmp) / "a", Path(tmp) / "b"
        dir_a.mkdir()
        dir_b.mkdir()
        if args.from_state is not None:
            dir_a.rmdir()
            result["from_state"] = from_state(
                sb, args.from_state, dir_a, args.hours, args.stamp_from
            )
        else:
            print("full refresh (bootstrap) into A ...", file=sys.stderr)
            result["full_initial"] = full_refresh(sb, dir_a)
        if args.from_state is None and not args.no_compare:
            result["advance"] = sb.admin("POST", "/advance", hours=args.hours).get("summary")
            print("incremental run into A ...", file=sys.stderr)
            result["incremental"] = incremental(sb, dir_a)
            print("full refresh of the same state into B ...", file=sys.stderr)
            result["full_same_state"] = full_refresh(sb, dir_b)
        print("freshness with the sensor loop ...", file=sys.stderr)
        result["freshness"] = freshness(
            sb, dir_a, args.rounds, args.poll, args.step_hours, args.gap
        )
    result["total_seconds"] = round(time.perf_counter() - started, 1)

    OUT_DIR.mkdir(exist_ok=True)
    out = OUT_DIR / f"incremental-{args.scale}.json"
    out.write_text(json.dumps(result, indent=2, default=str))
    fr = result["freshness"]
    if "incremental" in result:
        inc, full = result["incremental"], result["full_same_state"]
        print(
            f"scale {args.scale}, {args.hours} h of changes ({inc['events']} events), "
            f"latency {args.latency_ms} ms"
        )
        print(f"{'':24}{'requests':>10}{'lake s':>10}{'warehouse s':>13}{'models':>8}")
        for name, row in (("incremental", inc), ("full refresh", full)):
            print(
                f"{name:24}{row['requests']:>10}{row['seconds']:>10}"
                f"{row['warehouse_seconds']:>13}{row['models_built']:>8}"
            )
    print(
        f"freshness (scale {args.scale}, latency {args.latency_ms} ms, poll "
        f"{fr['poll_seconds']} s): median {fr['median_seconds']} s, "
        f"max {fr['max_seconds']} s over {len(fr['samples_seconds'])} changes"
    )
    for n, (total, part) in enumerate(
        zip(fr["samples_seconds"], fr["samples_parts"], strict=True), 1
    ):
        print(
            f"  change {n}: {total} s = wait {part['wait']} + land {part['land']} "
            f"+ refresh {part['refresh']} (+ the probe's lag)"
        )
    for run in fr["runs"]:
        print(
            f"  run: {run['events']} events, {run['requests']} requests, land {run['land']} s "
            f"({run['land_cpu_seconds']} CPU s, the sandbox {run['sandbox_cpu_seconds']}; "
            f"{run['streams_seconds']}; availability {run.get('availability')}; in workers "
            f"{run.get('workers')}), refresh "
            f"{run['refresh']} s ({run['refresh_cpu_seconds']} CPU s, by key / sums / whole "
            f"{run['by_key_sums_whole']})"
        )
    print(f"results: {out}")
    return result


if __name__ == "__main__":
    main()
