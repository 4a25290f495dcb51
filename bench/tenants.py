"""Benchmark: three tenants in one deployment against three single-tenant runs.

    python -m bench.tenants                    # medium worlds, seeds 7, 11, 23
    python -m bench.tenants --scale small      # quicker

The same three sandbox worlds (different seeds) are read twice with full runs: first as three
single-tenant runs, each in its own data directory and its own Dagster home
(`run_pipeline`, what `reservoir run --mode full` does); then as three tenants of one tenants
file in one data directory and one shared Dagster instance (`run_tenants`, what `reservoir run
--all-tenants --mode full` does, group warehouse included). Per tenant: wall time, requests
the sandbox served, the most requests it had in flight from the tenant's client at once (the
service caps it at 15; the sandbox answers 429 beyond), 429s. Results: a table on stdout, JSON
in bench/out/tenants-*.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

OUT_DIR = Path(__file__).resolve().parent / "out"
SEEDS = {"north": 7, "south": 11, "coast": 23}
CAP = 15


def _stats(handle: Any) -> dict[str, int]:
    s = handle.stats()
    return {
        "requests": int(s["requests"]),
        "peak_in_flight": int(s["peakInFlightPerClient"]),
        "throttled": int(s["throttled"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="medium", choices=("small", "medium", "large"))
    args = parser.parse_args()

    from pipelines.runner import ServiceTarget, run_pipeline
    from pipelines.settings import Settings
    from pipelines.tenant_runs import run_tenants
    from pipelines.tenants import Tenant
    from sandbox.runner import SandboxSettings, run_sandbox

    quiet = Console(file=open(os.devnull, "w"))  # noqa: SIM115
    tmp = Path(tempfile.mkdtemp(prefix="bench-tenants-"))
    results: dict[str, Any] = {"scale": args.scale, "seeds": SEEDS, "single": {}, "tenants": {}}
    with contextlib.ExitStack() as stack:
        handles = {
            name: stack.enter_context(run_sandbox(SandboxSettings(seed=seed, scale=args.scale)))
            for name, seed in SEEDS.items()
        }
        started = time.perf_counter()
        for name, handle in handles.items():
            handle.reset_stats()
            t0 = time.perf_counter()
            run_pipeline(
                Settings(data_dir=tmp / "single" / name),
                mode="full",
                quiet=True,
                console=quiet,
                target=ServiceTarget.from_sandbox(handle),
            )
            results["single"][name] = {"seconds": time.perf_counter() - t0, **_stats(handle)}
        results["single_total_seconds"] = time.perf_counter() - started

        for handle in handles.values():
            handle.reset_stats()
        tenants = [Tenant(name=name, sandbox_seed=seed) for name, seed in SEEDS.items()]
        started = time.perf_counter()
        run = run_tenants(
            Settings(data_dir=tmp / "deployment"),
            tenants,
            mode="full",
            quiet=True,
            console=quiet,
            targets={n: ServiceTarget.from_sandbox(h) for n, h in handles.items()},
        )
        results["tenants_total_seconds"] = time.perf_counter() - started
        for outcome in run.outcomes:
            results["tenants"][outcome.tenant] = {
                "seconds": outcome.seconds,
                "ok": outcome.ok,
                "error": outcome.error,
                **_stats(handles[outcome.tenant]),
            }
        results["group_seconds"] = run.group.seconds if run.group else None
    shutil.rmtree(tmp, ignore_errors=True)
    results["at"] = datetime.now(UTC).isoformat(timespec="seconds")

    print(f"scale {args.scale}; seeds {SEEDS}")
    print(f"{'tenant':8} {'single s':>9} {'tenant s':>9} {'requests':>17} {'peak':>9} {'429s':>5}")
    for name in SEEDS:
        a, b = results["single"][name], results["tenants"][name]
        print(
            f"{name:8} {a['seconds']:9.1f} {b['seconds']:9.1f} "
            f"{a['requests']:>8}/{b['requests']:<8} {a['peak_in_flight']:>4}/{b['peak_in_flight']:<4} "
            f"{a['throttled'] + b['throttled']:>5}"
        )
    print(
        f"total: three single-tenant runs {results['single_total_seconds']:.1f} s; "
        f"three tenants in one deployment {results['tenants_total_seconds']:.1f} s "
        f"(group warehouse {results['group_seconds'] or 0:.2f} s)"
    )
    peaks = [r["peak_in_flight"] for part in ("single", "tenants") for r in results[part].values()]
    print(f"peak concurrency per tenant never above {CAP}: {max(peaks) <= CAP} (max {max(peaks)})")
    OUT_DIR.mkdir(exist_ok=True)
    out = OUT_DIR / f"tenants-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(results, indent=2))
    print(f"json: {out}")


if __name__ == "__main__":
    main()
