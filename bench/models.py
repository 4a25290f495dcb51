"""Benchmark: the warehouse full build, and the refresh after one hour of changes.

    python -m bench.models                  # small scale
    python -m bench.models --scale medium   # what `make bench` runs
    python -m bench.models --scale large    # the target scale (issue #22: refresh <= 3 s)

1. The lake is loaded from an in-process sandbox world (no added latency) the way a run loads
   it: `apply_changes` bootstraps it (mark, full snapshot, cursor); its time is reported apart.
2. A child process runs `build_warehouse(data_dir)` (a full build into a new file).
3. The world advances one hour (`--hours`) and an incremental run lands its changes.
4. Baseline, on a copy of the data dir: the refresh as it was before the in-place refresh
   (`build_warehouse(only=<models of the changed tables>)`: a copy of the whole file and those
   models rebuilt from the whole history; a new full build when they were more than half).
5. A child process runs `refresh_warehouse(data_dir, defer_merges=True)`: in place, by key where
   models declare it (`warehouse.inplace`); which models were maintained by key, rebuilt whole or
   left alone. As Dagster's warehouse asset runs it (and `bench.refresh_hour`): DuckDB's
   row-group merges are deferred, its figures end when the marts are published, and the tidy
   after it (`warehouse.tidy`: the merges, where nobody waits) is timed apart. The full build of
   step 2 goes the same way (a new file: nothing deferred; its tidy only checkpoints).
Each child runs under `/usr/bin/time -v` (its "Maximum resident set size" is the peak RSS) and
reports wall and CPU seconds. Results: a table on stdout and JSON in bench/out/models-<scale>.json.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent / "out"
ROOT = Path(__file__).resolve().parents[1]
HORIZON_DAYS = 90
TIME = "/usr/bin/time"

_CHILD = r"""
import json, sys, time
from datetime import date
from pathlib import Path
t0, c0 = time.perf_counter(), time.process_time()
mode, data_dir, as_of = sys.argv[1], Path(sys.argv[2]), date.fromisoformat(sys.argv[3])
if mode == "full":
    from warehouse.build import build_warehouse
    result = build_warehouse(data_dir, as_of=as_of)
elif mode == "only":
    from warehouse.build import build_warehouse
    result = build_warehouse(data_dir, only=set(sys.argv[4].split(",")), as_of=as_of)
else:
    from warehouse.refresh import refresh_warehouse
    from warehouse.tidy import tidy_warehouse
    # as Dagster's warehouse asset runs it: the marts published with DuckDB's row-group merges
    # deferred, then the tidy that does them, where nobody waits (timed apart)
    result = refresh_warehouse(data_dir, as_of=as_of, defer_merges=True)
tidy = {"tidy_seconds": 0.0, "tidy_cpu_seconds": 0.0}
seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
if mode == "refresh":
    t1, c1 = time.perf_counter(), time.process_time()
    tidy_warehouse(data_dir)
    tidy = {"tidy_seconds": time.perf_counter() - t1, "tidy_cpu_seconds": time.process_time() - c1}
print(json.dumps({
    "seconds": seconds,
    "build_seconds": result.seconds,
    "cpu_seconds": cpu_seconds,
    **tidy,
    "models": len(result.models),
    "refreshed": result.refreshed,
    "slowest": sorted(((round(m.seconds, 2), q) for q, m in result.models.items()), reverse=True)[:10],
    "rows": sum(result.row_counts.values()),
}))
"""
_MAX_RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def load_lake(data_dir: Path, sb: Any) -> tuple[dict[str, Any], Callable[[], Any]]:
    """Bootstrap `data_dir/lake` from the running sandbox; returns figures and the opener."""
    from assets.modes import apply_changes
    from assets.settings import IngestSettings
    from lake.store import Lake
    from pipelines.resources import ReservationServiceResource
    from service.api import ReservationService

    # the sandbox's URL and credentials, the client's settings from the environment as a run
    # takes them (RESERVOIR_TIMEOUT: a starved sandbox may take more than the default 30 s to
    # answer a large page)
    config = (
        ReservationServiceResource(
            base_url=sb.base_url,
            client_id=sb.client_id,
            client_secret=sb.client_secret,
            scope=sb.scope,
        )
        .with_environment()
        .service_config()
    )

    def opener() -> Any:
        return ReservationService.connect(config)

    t1 = time.perf_counter()
    report = apply_changes(
        Lake(data_dir / "lake"), opener, IngestSettings(today=_today(sb), horizon_days=HORIZON_DAYS)
    )
    files = list((data_dir / "lake").rglob("*.parquet"))
    return {
        "extract_seconds": round(time.perf_counter() - t1, 2),
        "mode": report.mode,
        "lake_files": len(files),
        "lake_mb": round(sum(f.stat().st_size for f in files) / 2**20, 1),
    }, opener


def _today(sb: Any) -> date:
    """The sandbox's business date: from its world in this process, else from its admin API."""
    if hasattr(sb, "world"):
        with sb.world.lock:
            return sb.world.now.date()
    import httpx

    now = httpx.get(f"{sb.admin_url}/health", timeout=300).json()["now"]
    return datetime.fromisoformat(now).date()


def build_in_child(mode: str, data_dir: Path, as_of: date, only: set[str] | None = None) -> dict:
    """One build in a child process under `/usr/bin/time -v`: its figures and peak RSS."""
    args = [sys.executable, "-c", _CHILD, mode, str(data_dir), as_of.isoformat()]
    if only is not None:
        args.append(",".join(sorted(only)))
    proc = subprocess.run(
        [TIME, "-v", *args], capture_output=True, text=True, cwd=ROOT, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"warehouse {mode} build failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    found = _MAX_RSS.search(proc.stderr)
    out["peak_rss_mb"] = int(found.group(1)) / 1024 if found else None
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="small", choices=["small", "medium", "large"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--hours", type=int, default=1, help="hours of changes to refresh")
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="an empty dir to keep the data in"
    )
    args = parser.parse_args(argv)

    from assets.modes import apply_changes
    from assets.settings import IngestSettings
    from lake.state import pending_tables
    from lake.store import Lake
    from sandbox.runner import SandboxSettings, run_sandbox
    from warehouse.models import discover_models, models_depending_on

    result: dict[str, Any] = {
        "scale": args.scale,
        "seed": args.seed,
        "hours": args.hours,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    with tempfile.TemporaryDirectory(prefix="bench-models-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        data_dir.mkdir(parents=True, exist_ok=True)
        if any(data_dir.iterdir()):
            raise SystemExit(f"{data_dir} is not empty: give an empty (or new) --data-dir")
        t0 = time.perf_counter()
        with run_sandbox(SandboxSettings(seed=args.seed, scale=args.scale)) as sb:
            world_seconds = round(time.perf_counter() - t0, 2)
            print(f"loading the {args.scale} lake ...", file=sys.stderr)
            result["lake"], opener = load_lake(data_dir, sb)
            result["lake"]["world_seconds"] = world_seconds
            print("full build ...", file=sys.stderr)
            # no file yet: the refresh builds everything into a new file (and clears pending)
            result["full"] = build_in_child("refresh", data_dir, _today(sb))
            sb.world.advance(hours=args.hours)
            lake = Lake(data_dir / "lake")
            t1 = time.perf_counter()
            report = apply_changes(
                lake, opener, IngestSettings(today=_today(sb), horizon_days=HORIZON_DAYS)
            )
            result["changes"] = {
                "mode": report.mode,
                "seconds": round(time.perf_counter() - t1, 2),
                "tables": sorted(report.tables),
                "rows": sum(sum(rep.rows.values()) for rep in report.landed.values()),
            }
            as_of = _today(sb)
        only = models_depending_on(pending_tables(lake))
        baseline = Path(tmp) / "baseline"
        shutil.copytree(data_dir, baseline, symlinks=True)
        # the refresh before: past half of the models, a new full build instead of the copy
        mode = "only" if len(only) <= len(discover_models()) / 2 else "full"
        print(f"baseline ({mode}): {len(only)} models ...", file=sys.stderr)
        result["baseline_only"] = build_in_child(mode, baseline, as_of, only)
        result["baseline_only"]["mode"] = mode
        shutil.rmtree(baseline)
        print("refresh in place ...", file=sys.stderr)
        result["refresh"] = build_in_child("refresh", data_dir, as_of)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = OUT_DIR / f"models-{args.scale}.json"
    out.write_text(json.dumps(result, indent=2, default=str))
    print(f"scale {args.scale}: lake {result['lake']}; changes {result['changes']}")
    print(f"{'':34}{'wall s':>9}{'build s':>9}{'CPU s':>9}{'peak MB':>10}{'models':>8}")
    rows = (
        ("full build", result["full"]),
        (f"refresh before ({mode}, {len(only)} models)", result["baseline_only"]),
        ("refresh in place", result["refresh"]),
    )
    for name, row in rows:
        print(
            f"{name:34}{row['seconds']:>9}{row['build_seconds']:>9}{row['cpu_seconds']:>9}"
            f"{row['peak_rss_mb']:>10.0f}"
            f"{row['models']:>8}"
        )
    for name, row in rows[::2]:  # the refreshes, as Dagster's warehouse asset runs them
        print(
            f"{name}: then its tidy (the merges, where nobody waits) {row['tidy_seconds']} s "
            f"wall, {row['tidy_cpu_seconds']} CPU s"
        )
    by_key = sorted(q for q, how in result["refresh"]["refreshed"].items() if how == "keys")
    summed = sorted(q for q, how in result["refresh"]["refreshed"].items() if how == "sums")
    whole = sorted(q for q, how in result["refresh"]["refreshed"].items() if how == "whole")
    print(f"in place by key: {', '.join(by_key)}\nby sums: {', '.join(summed)}")
    print(f"rebuilt whole: {', '.join(whole)}")
    print(f"slowest models of the refresh: {result['refresh']['slowest']}")
    print(f"results: {out}")
    return result


if __name__ == "__main__":
    main()
