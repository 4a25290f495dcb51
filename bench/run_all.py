"""Run every benchmark with quick-but-meaningful arguments and write docs/benchmarks.md.

    python -m bench.run_all                 # all of them (make bench)
    python -m bench.run_all --only models   # one (repeatable)

Each benchmark runs as a child process (its own interpreter, so peak memory and CPU are its
own) and leaves JSON in bench/out/; this script collects the newest JSON each one wrote,
summarises the figures next to their targets, and rewrites the part of docs/benchmarks.md
between the markers, with the machine and the exact commands. Text outside the markers is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.proc import cpu_model

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "bench" / "out"
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- bench-results:begin (written by bench/run_all.py) -->"
END = "<!-- bench-results:end -->"
DAILY_FREE_REQUESTS = 25_000

Row = tuple[str, str, str]  # figure, value, target


@dataclass(frozen=True)
class Bench:
    name: str
    args: tuple[str, ...]
    json_prefix: str | None  # bench/out/<prefix>*.json; None = figures from stdout
    summarise: Callable[[dict[str, Any], str], list[Row]]

    def command(self) -> list[str]:
        return [sys.executable, "-m", f"bench.{self.name}", *self.args]


def _get(d: Any, *path: str, default: Any = None) -> Any:
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return default
        d = d[p]
    return d


def _num(v: Any, fmt: str = "{:,.2f}") -> str:
    return fmt.format(v) if isinstance(v, int | float) else "n/a"


def summarise_extract(data: dict[str, Any], _: str) -> list[Row]:
    runs = data.get("reservoir_runs") or [data.get("reservoir", {})]
    plain = [r for r in runs if not r.get("decoded_in_reader")]
    cold = plain[0] if plain else {}
    warm = plain[1] if len(plain) > 1 else {}
    decoded = next((r for r in runs if r.get("decoded_in_reader")), {})
    req, minimum = cold.get("requests"), cold.get("minimum_requests")
    above = (req - minimum) / minimum * 100 if req and minimum else None

    def cpu(run: dict[str, Any]) -> str:
        return f"{_num(run.get('client_cpu_seconds'))} / {_num(run.get('server_cpu_seconds'))}"

    rows = [
        ("extraction efficiency, sandbox warm (read #2)", _num(warm.get("efficiency")), ">= 0.85"),
        ("extraction efficiency, sandbox cold (read #1)", _num(cold.get("efficiency")), ""),
        (
            "extraction efficiency, warm, pages decoded in the reader",
            _num(decoded.get("efficiency")),
            "",
        ),
        ("slot utilisation (warm read)", _num(warm.get("slot_utilisation")), ""),
        ("requests / minimum", f"{req} / {minimum}", ""),
        ("requests above minimum", _num(above, "{:.2f} %"), "<= 2 %"),
        (
            "wall s (cold / warm / decoded)",
            " / ".join(_num(r.get("wall_seconds")) for r in (cold, warm, decoded)),
            "",
        ),
        ("client / sandbox CPU s, cold read", cpu(cold), ""),
        ("client / sandbox CPU s, warm read", cpu(warm), ""),
        ("client / sandbox CPU s, decoded read", cpu(decoded), ""),
    ]
    peer = next((v for k, v in data.items() if "dlt" in k and isinstance(v, dict)), None)
    if peer:
        rows.append(("peer (dlt rest_api) efficiency", _num(peer.get("efficiency")), ""))
        rows.append(
            (
                "peer requests / wall s",
                f"{peer.get('requests')} / {_num(peer.get('wall_seconds'))}",
                "",
            )
        )
    return rows


def summarise_normalise(data: dict[str, Any], stdout: str) -> list[Row]:
    rows: list[Row] = []
    for label in ("normalise", "normalise + write"):
        m = re.search(rf"^{re.escape(label)}\s*:.*records/s per core\s+([\d,]+)", stdout, re.M)
        value = (
            m.group(1)
            if m
            else _num(_get(data, label.replace(" + ", "_"), "records_per_core_second"), "{:,.0f}")
        )
        rows.append((f"{label}: source records/s per core", value, ">= 150,000 (per record?)"))
        m = re.search(rf"^{re.escape(label)}\s*:.*rows/s per core\s+([\d,]+)", stdout, re.M)
        if m:
            rows.append((f"{label}: lake rows/s per core", m.group(1), ">= 150,000 (per row?)"))
    m = re.search(r"^peak RSS\s*:\s*([\d,.]+) MB", stdout, re.M)
    rows.append(
        ("peak RSS (MB)", m.group(1) if m else _num(data.get("peak_rss_mb")), "<= 2,048 at large")
    )
    return rows


def summarise_incremental(data: dict[str, Any], _: str) -> list[Row]:
    inc, full = data.get("incremental", {}), data.get("full_same_state", {})
    hours = data.get("hours") or 1
    per_day = inc.get("requests") * 24 / hours if isinstance(inc.get("requests"), int) else None
    fresh = data.get("freshness", {})
    return [
        ("incremental run requests (after h of changes)", f"{inc.get('requests')} ({hours} h)", ""),
        ("full refresh requests, same state", str(full.get("requests")), ""),
        (
            "hourly cycle requests per day",
            _num(per_day, "{:,.0f}"),
            f"far inside {DAILY_FREE_REQUESTS:,}",
        ),
        (
            "freshness median / max (s)",
            f"{fresh.get('median_seconds')} / {fresh.get('max_seconds')}",
            "",
        ),
    ]


def summarise_workers(data: dict[str, Any], _: str) -> list[Row]:
    by: dict[int, list[dict[str, Any]]] = {}
    for run in data.get("runs", []):
        by.setdefault(run["workers"], []).append(run)

    def span(values: list[float]) -> str:
        low, high = min(values), max(values)
        return f"{low:.1f}" if low == high else f"{low:.1f}-{high:.1f}"

    rows: list[Row] = []
    for workers, runs in sorted(by.items()):
        rows.append(
            (
                f"reservation details, {workers} normaliser workers: wall s (fetching / "
                "workers' CPU s)",
                f"{span([r['wall_seconds'] for r in runs])} "
                f"({span([r['fetching_cpu_seconds'] for r in runs])} / "
                f"{span([r['worker_cpu_seconds'] for r in runs])})",
                "",
            )
        )
    return rows


def summarise_models(data: dict[str, Any], _: str) -> list[Row]:
    full, before = data.get("full", {}), data.get("baseline_only", {})
    refresh = data.get("refresh", {})
    refreshed = refresh.get("refreshed", {})
    # by key, or a model of sums by adding what changed: both in proportion to the change
    by_key = sum(1 for how in refreshed.values() if how in ("keys", "sums"))
    return [
        (
            "lake generation (world s / extract s)",
            f"{_get(data, 'lake', 'world_seconds')} / {_get(data, 'lake', 'extract_seconds')}",
            "",
        ),
        (
            "full build wall s (CPU s)",
            f"{_num(full.get('seconds'))} ({_num(full.get('cpu_seconds'))})",
            "<= 30 s at large",
        ),
        ("full build peak RSS (MB)", _num(full.get("peak_rss_mb"), "{:,.0f}"), "<= 3,072 at large"),
        (
            f"refresh after {data.get('hours', 1)} h of changes, in place, wall s (CPU s)",
            f"{_num(refresh.get('seconds'))} ({_num(refresh.get('cpu_seconds'))})",
            "<= 3 s at large",
        ),
        (
            "tidy after the refresh (the merges, where nobody waits), wall s (CPU s)",
            f"{_num(refresh.get('tidy_seconds'))} ({_num(refresh.get('tidy_cpu_seconds'))})",
            "",
        ),
        (
            "refresh in place: models by key or sums / rebuilt whole",
            f"{by_key} / {len(refreshed) - by_key}",
            "",
        ),
        (
            f"refresh as before ({before.get('mode', '')}), wall s",
            _num(before.get("seconds")),
            "",
        ),
    ]


BENCHES: tuple[Bench, ...] = (
    # The scale and latency issue #4 states for extraction efficiency.
    Bench(
        "extract",
        ("--scale", "medium", "--latency-ms", "50", "--repeat", "2", "--decoded-read"),
        "extract-medium",
        summarise_extract,
    ),
    Bench("normalise", ("--records", "100000"), "normalise", summarise_normalise),
    # Issue #7 states the incremental figures at medium scale after one hour of changes.
    Bench(
        "incremental",
        ("--scale", "medium", "--rounds", "3"),
        "incremental-medium",
        summarise_incremental,
    ),
    Bench("models", ("--scale", "medium"), "models-medium", summarise_models),
    # Normalisation in worker processes (the pipeline's full refresh), reservation details.
    Bench(
        "workers",
        ("--scale", "medium", "--workers", "0,1,2", "--repeat", "2"),
        "workers-medium",
        summarise_workers,
    ),
)


@dataclass
class Outcome:
    bench: Bench
    code: int
    seconds: float
    rows: list[Row]
    json_file: Path | None


def newest_json(prefix: str | None, since: float) -> Path | None:
    if prefix is None or not OUT_DIR.is_dir():
        return None
    found = [p for p in OUT_DIR.glob(f"{prefix}*.json") if p.stat().st_mtime >= since - 1]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def run(bench: Bench, timeout: float = 1800.0) -> Outcome:
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    print(f"$ {shlex.join(['python', *bench.command()[1:]])}", file=sys.stderr)
    started = time.time()
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            bench.command(), cwd=ROOT, capture_output=True, text=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        proc = subprocess.CompletedProcess(bench.command(), 124, out, err + "\n(timed out)")
    seconds = time.perf_counter() - t0
    (OUT_DIR / f"{bench.name}.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    path = newest_json(bench.json_prefix, started)
    data = json.loads(path.read_text()) if path else {}
    try:
        rows = bench.summarise(data, proc.stdout) if proc.returncode == 0 else []
    except (TypeError, ValueError, KeyError, ZeroDivisionError) as exc:
        rows = [("(could not summarise)", type(exc).__name__, "")]
    return Outcome(bench, proc.returncode, seconds, rows, path)


def machine() -> list[tuple[str, str]]:
    ram = "unknown"
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        m = re.search(r"^MemTotal:\s*(\d+) kB", meminfo.read_text(), re.M)
        ram = f"{int(m.group(1)) / 2**20:.1f} GiB" if m else ram
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return [
        ("CPU", cpu_model()),
        ("cores (nproc)", str(os.cpu_count())),
        ("RAM", ram),
        ("Python", platform.python_version()),
        ("OS", platform.platform()),
        ("load average at start (1, 5, 15 min)", load),
    ]


def render(outcomes: list[Outcome], host: list[tuple[str, str]]) -> str:
    lines = [
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M UTC} with `make bench` "
        "(`python -m bench.run_all`).",
        "",
        "| machine | |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in host]
    lines += ["", "| benchmark | figure | value | target |", "|---|---|---|---|"]
    for o in outcomes:
        if o.code != 0:
            lines.append(
                f"| {o.bench.name} | failed (exit {o.code}), see bench/out/{o.bench.name}.log | | |"
            )
        for figure, value, target in o.rows:
            lines.append(f"| {o.bench.name} | {figure} | {value} | {target} |")
    lines += ["", "Commands (from the project root, in this order; each in its own process):", ""]
    for o in outcomes:
        src = f" -> {o.json_file.relative_to(ROOT)}" if o.json_file else ""
        lines.append(
            f"- `{shlex.join(['python', *o.bench.command()[1:]])}` ({o.seconds:.0f} s{src})"
        )
    return "\n".join(lines)


HEADER = """# Benchmarks

`make bench` runs every benchmark below in its own process and rewrites the section between
the markers; the rest of this file is written by hand.

What each figure means, and its target (from the issues):
- **Extraction efficiency** (`bench/extract.py`): (requests x latency / concurrency cap) / wall
  time; 1.0 means the 15 allowed request slots were busy with latency the whole run. Target
  >= 0.85, with requests at most 2 % above the minimum (the sum over lists of ceil(records /
  page size)). The peer figure is a read of the same lists with dlt's `rest_api` source.
- **Normalisation** (`bench/normalise.py`): records per second per core (CPU time of the
  process) through `Normaliser.normalise`, and with the Parquet writes, counted two ways: source
  records (one reservation with its resources, bills and subjects is one record) and lake rows
  (~13 per reservation). Target >= 150,000 records/s/core, peak memory <= 2 GB at large scale;
  which count the target means is an open question on issue #5.
- **Models** (`bench/models.py`): the full DuckDB warehouse build (all models, published
  atomically) and the warehouse refresh after one hour of changes (an incremental run lands
  them; the refresh works in place, by key where models declare it, its row-group merges left
  to the tidy after it, timed apart, as Dagster's warehouse asset runs it), next to the refresh
  as it was before (a copy of the file and the models of the changed tables rebuilt); wall and CPU
  seconds, peak RSS of the building process (`/usr/bin/time -v`). Targets (issue #22), at large
  scale: full build <= 30 s and <= 3 GB, refresh after an hour <= 3 s.
- **Incremental** (`bench/incremental.py`): requests of an incremental run after an hour of
  changes next to a full refresh of the same state, and freshness (change to warehouse). Target:
  an hourly cycle far inside the 25,000 free requests per day.

Defaults run at medium scale, where issues #4 and #7 state their targets; the targets are stated for large scale
(`python -m bench.models --scale large`, `python -m bench.extract --scale large`, ...).
"""


def write_doc(body: str, doc: Path = DOC) -> None:
    text = doc.read_text() if doc.exists() else HEADER
    block = f"{BEGIN}\n{body}\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=[b.name for b in BENCHES])
    parser.add_argument("--doc", type=Path, default=DOC)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per benchmark")
    args = parser.parse_args(argv)
    host = machine()
    outcomes = [run(b, args.timeout) for b in BENCHES if not args.only or b.name in args.only]
    write_doc(render(outcomes, host), args.doc)
    for o in outcomes:
        print(f"{o.bench.name:12} exit {o.code}  {o.seconds:6.0f} s")
        for figure, value, target in o.rows:
            print(f"    {figure:50} {value:>20}  {target}")
    print(f"wrote {args.doc}")
    return 0 if all(o.code == 0 for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
