"""Benchmark: `reservoir run` end to end against its embedded sandbox, process by process.

    python -m bench.run --scale large                 # issue "Performance where users feel it"
    python -m bench.run --scale medium --data-dir /tmp/run-medium

Runs `reservoir run -q --mode full --scale <scale>` on an empty data directory (the sandbox in its
own process, as the command starts it) and samples the command's process tree every
`--interval` seconds from /proc: each process's peak RSS (`VmHWM`, and the second of the run it
was reached, to a sample) and CPU seconds (user + system; the pipeline's also within each step,
to a sample), labelled pipeline, sandbox,
normaliser worker or warehouse build (a large lake's build runs in a child process,
`pipelines/build_process.py`). From the run itself: the summary's rows
and requests per table, and from the Dagster instance the seconds of each step (the lake's
extraction, the warehouse build). Normaliser throughput is reservation documents per second of
the `reservations` stream. Results: a table on stdout and JSON in bench/out/run-<scale>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.proc import cpu_seconds, peak_rss_bytes

OUT_DIR = Path(__file__).resolve().parent / "out"
ROOT = Path(__file__).resolve().parents[1]


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(_children(p))
    return found


def _label(pid: int, root: int) -> str:
    if pid == root:
        return "pipeline"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return "?"
    if b"sandbox.process" in cmd:
        return "sandbox"
    if b"spawn_main" in cmd:  # pipelines/build_process.py (the workers come from a forkserver)
        return "warehouse build"
    if b"resource_tracker" in cmd:
        return "other"
    if b"multiprocessing" in cmd:
        return "normaliser worker"
    return "other"  # Dagster's compute-log tails and the like


def _sample(pid: int) -> tuple[int, float] | None:
    """(peak RSS bytes, CPU seconds) of a live process."""
    try:
        return peak_rss_bytes(pid), cpu_seconds(pid)
    except OSError:
        return None


def _parse_summary(out: str) -> dict[str, Any]:
    tables: dict[str, dict[str, Any]] = {}
    total: dict[str, Any] = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("│┃").split("│")]
        if len(cells) != 5 or not re.fullmatch(r"[\d,]*", cells[1] or "0"):
            continue
        name, rows, requests, seconds, quarantined = cells
        entry = {
            "rows": int(rows.replace(",", "") or 0),
            "requests": int(requests or 0),
            "seconds": float(seconds or 0),
            "quarantined": int(quarantined or 0),
        }
        if name == "total":
            total = entry
        else:
            tables[name] = entry
    models = re.search(r"warehouse: (\d+) models built", out)
    return {"tables": tables, "total": total, "models": int(models[1]) if models else None}


def _from_instance(
    data_dir: Path,
) -> tuple[dict[str, float], dict[str, float], dict[str, tuple[float, float]]]:
    """Seconds of each step of the last run in the data directory's Dagster instance, the
    build seconds of each warehouse model it materialised, and each step's (start, end) time."""
    os.environ["DAGSTER_HOME"] = str(data_dir / "dagster_home")
    import dagster as dg

    instance = dg.DagsterInstance.get()
    runs = instance.get_runs(limit=1)
    if not runs:
        return {}, {}, {}
    stats = [s for s in instance.get_run_step_stats(runs[0].run_id) if s.start_time]
    steps = {s.step_key: round((s.end_time or 0) - (s.start_time or 0), 1) for s in stats}
    windows = {s.step_key: (s.start_time or 0.0, s.end_time or 0.0) for s in stats}
    models: dict[str, float] = {}
    for entry in instance.all_logs(
        runs[0].run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
    ):
        materialization = entry.dagster_event.event_specific_data.materialization  # type: ignore[union-attr]
        seconds = materialization.metadata.get("build_seconds")
        if seconds is not None:
            models[materialization.asset_key.to_user_string()] = float(seconds.value)
    return steps, dict(sorted(models.items(), key=lambda kv: -kv[1])), windows


def _cpu_within(timeline: list[tuple[float, float]], start: float, end: float) -> float | None:
    """CPU seconds a process spent between two times, from its (time, CPU s) samples (to a
    sample: the last sample at or before each time)."""

    def at(when: float) -> float | None:
        before = [cpu for t, cpu in timeline if t <= when]
        return before[-1] if before else None

    first, last = at(start), at(end)
    return None if last is None else round(last - (first or 0.0), 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="large")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--interval", type=float, default=0.5)
    args = parser.parse_args(argv)
    data_dir = args.data_dir or Path(f"/tmp/reservoir-bench-run-{args.scale}")
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESERVOIR_")}
    env.update(RESERVOIR_DATA_DIR=str(data_dir), COLUMNS="200")
    cmd = [
        str(ROOT / ".venv" / "bin" / "reservoir"),
        *("run", "-q", "--mode", "full", "--scale", args.scale, "--seed", str(args.seed)),
    ]
    load_start = os.getloadavg()
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=data_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    seen: dict[int, dict[str, Any]] = {}
    pipeline_cpu: list[tuple[float, float]] = []  # (time, CPU s) of the pipeline process
    while proc.poll() is None:
        for pid in _tree(proc.pid):
            sample = _sample(pid)
            if sample is None:
                continue
            entry = seen.setdefault(
                pid,
                {
                    "label": _label(pid, proc.pid),
                    "first": time.time(),
                    # seconds into the run the process was first seen (to a sample): the
                    # normaliser workers start with the lake step, after the sandbox's start
                    "first_s": round(time.perf_counter() - started, 1),
                },
            )
            # a process that is exiting has no VmHWM any more: keep the largest seen
            peak = round(sample[0] / 2**20)
            if peak > entry.get("peak_rss_mb", 0):  # when the peak was reached (to a sample)
                entry["peak_at_s"] = round(time.perf_counter() - started, 1)
            entry["peak_rss_mb"] = max(entry.get("peak_rss_mb", 0), peak)
            entry["cpu_s"] = max(entry.get("cpu_s", 0.0), round(sample[1], 1))
            if pid == proc.pid:
                pipeline_cpu.append((time.time(), sample[1]))
        time.sleep(args.interval)
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    children = os.times()
    if proc.returncode != 0:
        sys.exit(f"reservoir run failed ({proc.returncode}):\n{err[-3000:]}\n{out[-3000:]}")
    summary = _parse_summary(out)
    steps, model_seconds, windows = _from_instance(data_dir)
    # The pipeline process's CPU within each step (a medium run builds the warehouse in it).
    step_cpu = {step: _cpu_within(pipeline_cpu, *window) for step, window in windows.items()}
    reservations = summary["tables"].get("reservations", {})
    docs_per_s = (
        reservations["rows"] / reservations["seconds"] if reservations.get("seconds") else None
    )
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["reservoir", *cmd[1:]]),
        "scale": args.scale,
        "wall_s": round(wall, 1),
        "cpu_s_all_processes": round(children.children_user + children.children_system, 1),
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "processes": sorted(seen.values(), key=lambda e: e["first"]),
        "requests": summary["total"].get("requests"),
        "lake_rows": summary["total"].get("rows"),
        "run_seconds": summary["total"].get("seconds"),
        "models": summary["models"],
        "reservations_docs_per_s": round(docs_per_s) if docs_per_s else None,
        "steps_s": steps,
        "steps_pipeline_cpu_s": step_cpu,
        "model_build_s": model_seconds,
        "tables": summary["tables"],
    }
    OUT_DIR.mkdir(exist_ok=True)
    path = OUT_DIR / f"run-{args.scale}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{result['command']}: wall {result['wall_s']} s, CPU {result['cpu_s_all_processes']} s")
    print(f"load average {result['load_average_start']} -> {result['load_average_end']}")
    for entry in result["processes"]:
        print(
            f"  {entry['label']:<20} peak RSS {entry['peak_rss_mb']:>6} MB "
            f"(at {entry.get('peak_at_s', 0):>7.1f} s)  CPU {entry['cpu_s']} s"
            f"  from {entry['first_s']:.1f} s"
        )
    print(
        f"requests {result['requests']}, lake rows {result['lake_rows']:,}, "
        f"models {result['models']}, reservations {docs_per_s or 0:,.0f} docs/s"
    )
    for step, seconds in steps.items():
        print(f"  step {step}: {seconds} s (pipeline process CPU {step_cpu.get(step)} s)")
    slowest = ", ".join(f"{name} {sec:.1f}" for name, sec in list(model_seconds.items())[:8])
    print(f"  slowest models (build s): {slowest}")
    print(f"-> {path}")


if __name__ == "__main__":
    main()
