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
per request. Results: a table on stdout and JSON in bench/out/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import httpx

from assets.modes import apply_changes
from assets.settings import IngestSettings
from lake.state import read_cursor
from lake.store import Lake
from pipelines.resources import ReservationServiceResource
from pipelines.sensors import feed_decision, poll_high_water
from warehouse.refresh import refresh_warehouse

OUT_DIR = Path(__file__).parent / "out"
STARTUP_TIMEOUT = 900.0


@dataclass
class Sandbox:
    process: subprocess.Popen[bytes]
    root: str
    secret: str = field(repr=False)

    @property
    def base_url(self) -> str:
        return self.root + "/service/v2"

    def admin(self, method: str, path: str, **params: Any) -> Any:
        response = httpx.request(method, f"{self.root}/_admin{path}", params=params, timeout=600)
        response.raise_for_status()
        return response.json()

    def resource(self) -> ReservationServiceResource:
        return ReservationServiceResource(
            base_url=self.base_url,
            client_id="reservoir-sandbox",
            client_secret=self.secret,
            scope="SBX",
        )

    def today(self) -> date:
        return datetime.fromisoformat(self.admin("GET", "/health")["now"]).date()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_sandbox(scale: str, seed: int, latency_ms: float) -> Sandbox:
    port = _free_port()
    secret = secrets.token_urlsafe(16)
    cmd = [
        sys.executable,
        "-m",
        "sandbox.runner",
        "--port",
        str(port),
        "--scale",
        scale,
        "--seed",
        str(seed),
        "--latency-ms",
        str(latency_ms),
        f"--client-secret={secret}",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    sb = Sandbox(proc, f"http://127.0.0.1:{port}", secret)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the sandbox exited during startup")
        try:
            sb.admin("GET", "/health")
            return sb
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError("the sandbox did not start in time")


def _settings(sb: Sandbox) -> IngestSettings:
    return IngestSettings(today=sb.today())


def _timed_build(data_dir: Path) -> tuple[float, int]:
    t = time.perf_counter()
    result = refresh_warehouse(data_dir)
    return time.perf_counter() - t, len(result.models) if result is not None else 0


def _apply(sb: Sandbox, data_dir: Path) -> tuple[Any, dict[str, Any]]:
    """One `apply_changes` run on `data_dir` (a bootstrap when its lake is empty) + the build."""
    report = apply_changes(Lake(data_dir / "lake"), sb.resource().open_client, _settings(sb))
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


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of a process and its waited-for children, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class SensorLoop(threading.Thread):
    """The feed sensor's decision and the incremental job's work, every `poll` seconds."""

    def __init__(self, sb: Sandbox, data_dir: Path, poll: float) -> None:
        super().__init__(name="sensor-loop", daemon=True)
        self.sb, self.data_dir, self.poll = sb, data_dir, poll
        self.lake = Lake(data_dir / "lake")
        self.stop = threading.Event()
        self.published: list[tuple[float, int]] = []  # (monotonic time, cursor) per publish
        # (started, landed, published) monotonic times per run, in the order of `published`
        self.timings: list[tuple[float, float, float]] = []
        self.details: list[dict[str, Any]] = []  # per run: what it landed and refreshed
        self.ticks = 0
        self.runs = 0
        self.errors: list[str] = []

    def run(self) -> None:
        resource = self.sb.resource()
        while not self.stop.is_set():
            self.ticks += 1
            try:
                cursor = read_cursor(self.lake)
                decision = feed_decision(
                    cursor.event_id if cursor else None, poll_high_water(resource)
                )
                if not hasattr(decision, "run_key"):
                    self.stop.wait(self.poll)
                    continue
                started, cpu = time.monotonic(), time.process_time()
                served = _cpu_of(self.sb.process.pid)
                report = apply_changes(self.lake, resource.open_client, _settings(self.sb))
                landed, land_cpu = time.monotonic(), time.process_time() - cpu
                served = _cpu_of(self.sb.process.pid) - served
                cpu = time.process_time()
                refreshed = refresh_warehouse(self.data_dir)
                hows = list(refreshed.refreshed.values()) if refreshed is not None else []
                self.details.append(
                    {
                        "events": report.plan.get("events"),
                        "requests": report.requests,
                        "streams_seconds": {
                            name: round(rep.seconds, 2)
                            for name, rep in sorted(report.landed.items())
                            if rep.seconds >= 0.5
                        },
                        "tables": sorted(report.tables),
                        # the availability compare: records read, differing, types in scope
                        "availability": {
                            k: v
                            for k, v in report.diffs.get("availability", {}).items()
                            if k in ("read", "differing", "removed", "scope")
                        },
                        # streams normalised in worker processes (their CPU is not counted here)
                        "workers": sorted(
                            n for n, rep in report.landed.items() if rep.normalise_workers
                        ),
                        # CPU s process-wide (this loop's threads and the probe's few calls)
                        "land_cpu_seconds": round(land_cpu, 2),
                        # the sandbox's process (and its encode workers, once reaped) meanwhile
                        "sandbox_cpu_seconds": round(served, 2),
                        "refresh_cpu_seconds": round(time.process_time() - cpu, 2),
                        "by_key_sums_whole": [hows.count(h) for h in ("keys", "sums", "whole")],
                    }
                )
                self.runs += 1
                self.timings.append((started, landed, time.monotonic()))
                self.published.append((time.monotonic(), int(report.cursor_after or 0)))
            except Exception as exc:  # keep looping, like a sensor tick that failed
                self.errors.append(repr(exc))
                self.stop.wait(self.poll)


async def _latest_reservation_change(sb: Sandbox, after: int) -> tuple[int, str | None] | None:
    """The last reservation changed after event `after`: its modifiedDate, None when deleted."""
    from service.api import ReservationService
    from service.errors import NotFound

    async with ReservationService.connect(sb.resource().service_config()) as service:
        last_action: dict[int, str] = {}
        async for page in service.events(after_event_id=after):
            for e in page:
                if e.get("eventType") == "RESERVATION_EVENT":
                    rid = int(e["entityId"])
                    last_action.pop(rid, None)  # keep insertion order = order of last change
                    last_action[rid] = str(e.get("entityAction"))
        if not last_action:
            return None
        rid = list(last_action)[-1]
        try:
            record = await service.get(f"/reservations/{rid}")
        except NotFound:
            return rid, None
        return rid, str(record["modifiedDate"])


def _visible(data_dir: Path, rid: int, modified: str | None) -> bool:
    """The warehouse shows the reservation as the service has it (absent when deleted)."""
    path = data_dir / "warehouse.duckdb"
    if not path.exists():
        return False
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return False
    try:
        row = con.execute(
            "select strftime(modified_at at time zone 'UTC', '%Y-%m-%dT%H:%M:%S.%g') "
            "from staging.stg_reservations where reservation_id = ?",
            [rid],
        ).fetchone()
    finally:
        con.close()
    if modified is None:
        return row is None
    return row is not None and row[0] == modified


def from_state(sb: Sandbox, state: Path, data_dir: Path, hours: float) -> dict[str, Any]:
    """A copy of a prepared state as the data dir, the sandbox moved to its hour, the copy's
    warehouse refreshed; stops when the state's cursor is not the sandbox's newest event."""
    print(f"copying {state} and advancing the sandbox {hours} h ...", file=sys.stderr)
    shutil.copytree(state, data_dir, symlinks=True)
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


def freshness(
    sb: Sandbox, data_dir: Path, rounds: int, poll: float, step_hours: float, gap: float
) -> dict[str, Any]:
    loop = SensorLoop(sb, data_dir, poll)
    loop.start()
    samples: list[float] = []
    parts: list[dict[str, float]] = []  # per sample: wait for the run, landing, refresh
    skipped = 0
    try:
        i = 0
        while len(samples) < rounds and i < rounds * 5:
            i += 1
            time.sleep(gap)
            before = read_cursor(loop.lake)
            summary = sb.admin("POST", "/advance", hours=step_hours).get("summary", {})
            t0 = time.monotonic()
            target = int(summary.get("lastEventId") or 0)
            if target < int(summary.get("firstEventId") or 0):
                skipped += 1  # nothing happened in that step: nothing to see
                continue
            probe = asyncio.run(_latest_reservation_change(sb, before.event_id if before else 0))
            deadline = t0 + 300
            while time.monotonic() < deadline:
                done = [
                    (t, n) for n, (t, c) in enumerate(loop.published) if c >= target and t >= t0
                ]
                if done and (probe is None or _visible(data_dir, *probe)):
                    started, landed, published = loop.timings[done[0][1]]
                    samples.append(done[0][0] - t0)
                    parts.append(
                        {
                            "wait": round(started - t0, 2),
                            "land": round(landed - started, 2),
                            "refresh": round(published - landed, 2),
                        }
                    )
                    print(
                        f"  change {i}: visible after {samples[-1]:.2f} s {parts[-1]}",
                        file=sys.stderr,
                    )
                    break
                time.sleep(0.05)
            else:
                print(f"  change {i}: not visible within 300 s", file=sys.stderr)
    finally:
        loop.stop.set()
        loop.join(60)
    return {
        "rounds": rounds,
        "poll_seconds": poll,
        "step_hours": step_hours,
        "samples_seconds": [round(s, 2) for s in samples],
        "samples_parts": parts,
        "runs": [
            {"land": round(b - a, 2), "refresh": round(c - b, 2), **d}
            for (a, b, c), d in zip(loop.timings, loop.details, strict=True)
        ],
        "median_seconds": round(statistics.median(samples), 2) if samples else None,
        "max_seconds": round(max(samples), 2) if samples else None,
        "steps_without_events": skipped,
        "sensor_ticks": loop.ticks,
        "run_count": loop.runs,
        "errors": loop.errors[:5],
    }


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
    args = parser.parse_args(argv)

    started = time.perf_counter()
    sb = start_sandbox(args.scale, args.seed, args.latency_ms)
    result: dict[str, Any] = {
        "scale": args.scale,
        "seed": args.seed,
        "latency_ms": args.latency_ms,
        "hours": args.hours,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    try:
        with tempfile.TemporaryDirectory(prefix="bench-incremental-") as tmp:
            dir_a, dir_b = Path(tmp) / "a", Path(tmp) / "b"
            dir_a.mkdir()
            dir_b.mkdir()
            if args.from_state is not None:
                dir_a.rmdir()
                result["from_state"] = from_state(sb, args.from_state, dir_a, args.hours)
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
    finally:
        sb.process.terminate()
        sb.process.wait(30)
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
