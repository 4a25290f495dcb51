"""Benchmark: the full warehouse build on an existing lake, model by model and step by step.

    python -m bench.build_profile --data-dir /tmp/large-run/data   # the lake of `bench.run`
    /usr/bin/time -v python -m bench.build_profile --data-dir ...   # and the peak RSS
    python -m bench.build_profile --data-dir ... --checks           # and the asset checks after
    python -m bench.build_profile --data-dir ... --workers 1        # one model statement at a time

`bench.models` regenerates its lake before it builds (25 minutes at large on a busy host); this
one builds the lake a run already left in `--data-dir` (it replaces that directory's
warehouse.duckdb). CPU seconds per model are `time.process_time()` around the model's statement,
so they count DuckDB's threads; `peak_mb` is the process's peak RSS when the model ended (it only
grows: the model that raised it is the one whose figure first reaches it). The fixed steps around
the models are timed the same way: the lake's catalogs, macros and schemas (`prepare`), the
models' row counts and columns (`describe`), the COMMENTs, the KPI window, the record of the lake
files, the commit, the checkpoint (with the connection's close) and the publish; with
`--checks`, every data check run on the published file. Results: the slowest models and the
steps on stdout, everything in bench/out/build-profile.json (`--out` to name another file).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent / "out"
# the build's module-level steps timed by wrapping them (a name absent from a version is skipped)
STEPS = (
    "prepare",
    "resolve_as_of",
    "write_settings",
    "describe_models",
    "apply_comments",
    "record_build",
    "detach_lake",
    "publish",
)


CORES = 2  # the cores the build is given (docs/benchmarks.md): idle core seconds count these
SAMPLE_S = 0.1  # the CPU sampler's period
TIMELINE_S = 5.0  # a row of the printed timeline


class CpuSampler:
    """The process's CPU seconds (every thread's) sampled every `SAMPLE_S` in a thread of its
    own: a model's CPU is its share of each period it ran in (split evenly among the models
    running then), so models built at once are not counted twice."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def _run(self) -> None:
        while True:
            self.samples.append(_clock())
            if self._stop.wait(SAMPLE_S):
                self.samples.append(_clock())
                return

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def periods(self) -> list[tuple[float, float, float]]:
        """(start, end, CPU seconds) of each sampled period."""
        s = self.samples
        return [(a[0], b[0], b[1] - a[1]) for a, b in itertools.pairwise(s)]

    def cpu_between(self, start: float, end: float) -> float:
        """CPU seconds in [start, end], a period cut by either prorated."""
        total = 0.0
        for a, b, c in self.periods():
            overlap = min(b, end) - max(a, start)
            if overlap > 0 and b > a:
                total += c * overlap / (b - a)
        return total

    def shares(self, spans: dict[str, tuple[float, float]]) -> dict[str, float]:
        """Each model's share of the CPU of the periods it ran in."""
        out = dict.fromkeys(spans, 0.0)
        for a, b, c in self.periods():
            if b <= a:
                continue
            parts = {q: min(b, w1) - max(a, w0) for q, (w0, w1) in spans.items()}
            parts = {q: t for q, t in parts.items() if t > 0}
            for q, t in parts.items():
                out[q] += c * t / (b - a) / len(parts)
        return out


def timeline(
    spans: dict[str, tuple[float, float]], sampler: CpuSampler, t0: float
) -> list[dict[str, Any]]:
    """Every `TIMELINE_S` of the build: the cores busy and the models that ran in it."""
    end = max((w1 for _, w1 in spans.values()), default=t0)
    rows = []
    at = t0
    while at < end:
        nxt = at + TIMELINE_S
        rows.append(
            {
                "at_s": round(at - t0, 1),
                "cores_busy": round(sampler.cpu_between(at, nxt) / TIMELINE_S, 2),
                "running": [
                    q.split(".", 1)[1] for q, (w0, w1) in spans.items() if w0 < nxt and w1 > at
                ],
            }
        )
        at = nxt
    return rows


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--checks", action="store_true", help="run every data check after")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "build-profile.json")
    parser.add_argument(
        "--workers", type=int, help="model statements at once (default warehouse.schedule's)"
    )
    args = parser.parse_args(argv)

    import warehouse.build as build

    if args.workers is not None:
        import warehouse.schedule as schedule

        schedule.WORKERS = args.workers

    peak: dict[str, float] = {}
    steps: dict[str, list[float]] = {}
    marks: dict[str, tuple[float, float]] = {}
    build_model = build._build_model

    spans: dict[str, tuple[float, float]] = {}
    sampler = CpuSampler()

    def timed(con: Any, model: Any) -> Any:
        w0 = time.perf_counter()
        try:
            return build_model(con, model)
        finally:
            spans[model.qualified] = (w0, time.perf_counter())
            peak[model.qualified] = _peak_mb()

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*a: Any, **k: Any) -> Any:
            w0, c0 = _clock()
            marks[f"{name}:start"] = (w0, c0)
            try:
                return fn(*a, **k)
            finally:
                w1, c1 = _clock()
                marks[f"{name}:end"] = (w1, c1)
                total = steps.setdefault(name, [0.0, 0.0])
                total[0] += w1 - w0
                total[1] += c1 - c0

        return wrapped

    build._build_model = timed  # type: ignore[assignment]
    for name in STEPS:
        if hasattr(build, name):
            setattr(build, name, wrap(name, getattr(build, name)))

    load = os.getloadavg()
    t0, c0 = _clock()
    sampler.start()
    try:
        result = build.build_warehouse(args.data_dir)
    finally:
        sampler.stop()
    wall, total_cpu = time.perf_counter() - t0, time.process_time() - c0
    cpu = sampler.shares(spans)

    def gap(start: str, end: str) -> list[float] | None:
        if start in marks and end in marks:
            return [marks[end][0] - marks[start][0], marks[end][1] - marks[start][1]]
        return None

    # what lies between the wrapped steps: the KPI window's view (comments -> record), the
    # commit (record -> detach), the checkpoint and close (detach -> publish)
    derived = {
        "kpi_window": gap("apply_comments:end", "record_build:start"),
        "commit": gap("record_build:end", "detach_lake:start"),
        "checkpoint_and_close": gap("detach_lake:end", "publish:start"),
    }
    fixed = {
        k: {"wall_s": round(v[0], 2), "cpu_s": round(v[1], 2)}
        for k, v in [*steps.items(), *derived.items()]
        if v is not None
    }
    first = min(w0 for w0, _ in spans.values())
    last = max(w1 for _, w1 in spans.values())
    models_cpu = sampler.cpu_between(first, last)
    phase = {
        "wall_s": round(last - first, 2),
        "cpu_s": round(models_cpu, 2),
        "cores_busy": round(models_cpu / (last - first), 2) if last > first else None,
        "idle_core_s": round(CORES * (last - first) - models_cpu, 1),
    }
    models = {
        q: {
            "wall_s": round(m.seconds, 2),
            "cpu_s": round(cpu[q], 2),
            "start_s": round(spans[q][0] - t0, 2),
            "end_s": round(spans[q][1] - t0, 2),
            "rows": m.row_count,
            "peak_mb": round(peak[q]),
        }
        for q, m in sorted(result.models.items(), key=lambda kv: -cpu[kv[0]])
    }
    out: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "data_dir": str(args.data_dir),
        "load_average_start": [round(x, 2) for x in load],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "wall_s": round(wall, 1),
        "cpu_s": round(total_cpu, 1),
        "peak_mb": round(_peak_mb()),
        "models_cpu_s": round(sum(cpu.values()), 1),
        "models_wall_s": round(sum(m.seconds for m in result.models.values()), 1),
        "models_phase": phase,
        "fixed": fixed,
        "models": models,
        "timeline": timeline(spans, sampler, t0),
    }
    print(
        f"full build: wall {wall:.1f} s, CPU {total_cpu:.1f} s, peak {out['peak_mb']} MB, "
        f"{len(models)} models (models: {out['models_wall_s']} s wall, {out['models_cpu_s']} CPU s)"
    )
    for q, m in list(models.items())[: args.top]:
        print(
            f"  {m['cpu_s']:7.2f} CPU s {m['wall_s']:7.2f} s {m['peak_mb']:6} MB  {q} "
            f"({m['rows']:,} rows)"
        )
    for name, f in fixed.items():
        print(f"  {f['cpu_s']:7.2f} CPU s {f['wall_s']:7.2f} s  step {name}")
    print(
        f"  the models' phase: {phase['wall_s']} s wall, {phase['cpu_s']} CPU s, "
        f"{phase['cores_busy']} of {CORES} cores busy ({phase['idle_core_s']} core s idle)"
    )
    for row in out["timeline"]:
        print(
            f"  {row['at_s']:6.1f} s  {row['cores_busy']:4.2f} cores  {', '.join(row['running'])}"
        )
    if args.checks:
        from warehouse.checks import run_checks

        w0, c0 = _clock()
        checks = run_checks(result.path)
        out["checks"] = {
            "count": len(checks),
            "failed": [c.name for c in checks if not c.passed],
            "wall_s": round(time.perf_counter() - w0, 2),
            "cpu_s": round(time.process_time() - c0, 2),
            "peak_mb_after": round(_peak_mb()),
        }
        print(f"  checks: {out['checks']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
