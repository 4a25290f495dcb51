"""The incremental benchmark's freshness: the feed sensor's decision and the incremental job's
work looped in a thread (`SensorLoop`) while the sandbox makes changes, and for each change the
time until the published warehouse shows it, split into the wait, the landing and the refresh
(bench/incremental.py).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import duckdb

from assets.modes import apply_changes
from assets.settings import IngestSettings
from bench.proc import cpu_seconds
from bench.sandbox_process import Sandbox
from lake.state import read_cursor
from lake.store import Lake
from pipelines.sensors import feed_decision, poll_high_water
from warehouse.refresh import refresh_warehouse


def _cpu_of(pid: int) -> float:
    """CPU seconds of the sandbox's process and its waited-for children; 0 once it is gone."""
    try:
        return cpu_seconds(pid, reaped=True)
    except OSError:
        return 0.0


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
                report = apply_changes(
                    self.lake, resource.open_client, IngestSettings(today=self.sb.today())
                )
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
