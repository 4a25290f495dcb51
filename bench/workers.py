"""Benchmark: one spec extracted with its pages normalised in 0, 1, 2, ... worker processes.

    python -m bench.workers --scale medium --workers 0,1,2 --repeat 2

The sandbox runs once in a child process with its encode cache warmed at start (not timed), so
that the figures are the pipeline's, not the sandbox's first encoding. Each extraction runs
`assets.extract.run_spec` in a fresh Python process (the worker pool's start is included) and
reports its wall time, the CPU of the fetching process and the CPU of its workers (read from
/proc before the pool shuts down). Settings alternate within each repeat. Results: a table on
stdout and JSON in bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.proc import cpu_seconds

OUT_DIR = Path(__file__).parent / "out"


def child(base_url: str, secret: str, data_dir: str, workers: int, spec_name: str) -> None:
    """One extraction in this process; prints one JSON line."""
    from assets import workers as pools
    from assets.catalogue import SPECS
    from assets.extract import run_spec
    from assets.settings import IngestSettings
    from lake.parts import new_batch_id
    from lake.store import Lake
    from service.api import ReservationService
    from service.config import ServiceConfig

    config = ServiceConfig(
        base_url=base_url,
        client_id="reservoir-sandbox",
        client_secret=secret,
        scope="SBX",
        timeout=120.0,
    )
    spec = {s.name: s for s in SPECS}[spec_name]
    cpu0, started = time.process_time(), time.perf_counter()
    report = run_spec(
        spec,
        lake=Lake(Path(data_dir) / "lake"),
        batch_id=new_batch_id(),
        settings=IngestSettings(normalise_workers=workers),
        open_client=lambda: ReservationService.connect(config),
    )
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu0
    pool = pools._pool
    pids = [pid for ex in pool.executors for pid in ex._processes] if pool is not None else []
    worker_cpu = sum(cpu_seconds(pid) for pid in pids)
    print(
        json.dumps(
            {
                "wall_seconds": round(wall, 2),
                "fetching_cpu_seconds": round(cpu, 2),
                "worker_cpu_seconds": round(worker_cpu, 2),
                "workers_used": report.normalise_workers,
                "records": report.records,
                "requests": report.requests,
                "quarantined": report.quarantined,
            }
        )
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    from bench.sandbox_process import start_sandbox

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="medium")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--spec", default="reservations")
    parser.add_argument("--workers", default="0,1,2", help="comma-separated worker counts")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]

    rows: list[dict[str, Any]] = []
    with start_sandbox(
        args.scale, seed=args.seed, latency_ms=args.latency_ms, warm=True
    ) as sandbox:
        for repeat in range(args.repeat):
            for workers in counts:
                with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
                    server0 = sandbox.cpu_seconds()
                    cmd = [sys.executable, "-m", "bench.workers", "--child"]
                    cmd += [sandbox.base_url, sandbox.secret, tmp, str(workers), args.spec]
                    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
                    if out.returncode:
                        raise RuntimeError(f"extraction failed:\n{out.stderr[-3000:]}")
                    row = json.loads(out.stdout.strip().splitlines()[-1])
                    row.update(
                        repeat=repeat + 1,
                        workers=workers,
                        sandbox_cpu_seconds=round(sandbox.cpu_seconds() - server0, 2),
                    )
                    rows.append(row)
                    print(
                        f"workers={workers} repeat={repeat + 1}: wall {row['wall_seconds']:.1f} s,"
                        f" fetching CPU {row['fetching_cpu_seconds']:.1f} s, workers' CPU "
                        f"{row['worker_cpu_seconds']:.1f} s, sandbox CPU "
                        f"{row['sandbox_cpu_seconds']:.1f} s, {row['records']:,} records, "
                        f"{row['requests']} requests",
                        flush=True,
                    )
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "scale": args.scale,
        "spec": args.spec,
        "latency_ms": args.latency_ms,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "runs": rows,
    }
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out_file = OUT_DIR / f"workers-{args.scale}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out_file.write_text(json.dumps(result, indent=2))
    print(f"written to {out_file}")
    return result


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        base_url, secret, data_dir, workers, spec_name = sys.argv[2:7]
        child(base_url, secret, data_dir, int(workers), spec_name)
    else:
        main()
