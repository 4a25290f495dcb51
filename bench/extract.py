"""Benchmark: a full read of every list the pipeline uses, from the sandbox, with our client and
with dlt's `rest_api` source as the peer figure.

    python -m bench.extract --scale medium --latency-ms 50 --repeat 2 --decoded-read
    python -m bench.extract --scale small            # quick run

The sandbox runs in a child process (`bench/sandbox_process.py`: its CPU work does not share our
GIL) with a fixed latency per request. Efficiency = (requests x latency / cap) / wall time: 1.0 means the cap of
concurrent requests was busy with latency the whole time. `minimum` is the sum over every list
read of ceil(records / the page size that list used) (reservation details use the client's
`details_page_size`). CPU seconds of both processes are reported next to the wall time, because
on a small machine the client, the sandbox and anything else running share the cores. With
`--repeat`, the first read finds the sandbox's encode cache cold and later ones warm: a cold read
also measures the sandbox encoding pages on the cores the client uses, which a real service does
on its own machines. Pages arrive as the client delivers them to the pipeline, counted and keyed
but not decoded (`service.lazy`); `--decoded-read` adds a read that decodes every page in the
reading process as it arrives. Results: a table on stdout and JSON in bench/out/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.sandbox_process import Sandbox, start_sandbox
from service.api import ReservationService
from service.client import ServiceClient
from service.config import DEFAULT_DETAILS_PAGE_SIZE, ServiceConfig
from service.config import DEFAULT_PAGE_SIZE as _DEFAULT_CONFIG_PAGE_SIZE
from service.lazy import LazyRecords
from service.throttle import ConcurrencyLimiter

OUT_DIR = Path(__file__).parent / "out"
CAP = 15
DEFAULT_PAGE_SIZE = _DEFAULT_CONFIG_PAGE_SIZE

# facade method -> (path, id field); the lists the pipeline reads in a full run
TOP_LISTS: dict[str, tuple[str, str]] = {
    "distribution_channels": ("distributionchannels", "distributionChannelId"),
    "locations": ("locations", "locationId"),
    "accommodation_types": ("accommodationtypes/details", "resourceId"),
    "units": ("units", "unitId"),
    "rate_types": ("ratetypes", "rateTypeId"),
    "rate_options": ("ratetypes/rateoptions", "rateOptionId"),
    "companies": ("companies", "companyId"),
    "journal_reports": ("companies/journalreports", "journalReportId"),
    "cash_accounts": ("cashreservations/accounts", "cashAccountId"),
    "cash_clearances": ("cashreservations/clearance", "cashClearanceId"),
    "customers": ("customers", "customerId"),
    "reservation_details": ("reservations/details", "reservationId"),
    "events": ("events", "eventId"),
}


async def read_with_client(
    sandbox: Sandbox, page_size: int, details_page_size: int, *, decode: bool = False
) -> dict[str, Any]:
    """Every list at once through one ReservationService; children as their parents arrive.

    Pages arrive as `LazyRecords` (counted and keyed, not decoded): the pipeline decodes them
    where it normalises them. With `decode`, every page is also decoded here as it arrives, the
    cost a reader pays when it needs the records in the process that reads.
    """
    config = ServiceConfig(
        base_url=sandbox.base_url,
        client_id="reservoir-sandbox",
        client_secret=sandbox.secret,
        scope="SBX",
        page_size=page_size,
        details_page_size=details_page_size,
        max_concurrency=CAP,
        timeout=60.0,
    )
    sizes = {name: page_size for name in TOP_LISTS}
    sizes["reservation_details"] = config.details_size
    limiter = ConcurrencyLimiter(CAP)
    counts: Counter[str] = Counter()
    lists: Counter[str] = Counter()  # (name) -> number of separate lists read
    list_sizes: list[tuple[str, int]] = []  # (name, records) per list read
    async with ReservationService(ServiceClient(config, limiter=limiter), owns_client=True) as svc:
        await svc.client.auth.header()  # authenticate outside the timed read
        svc.client.stats.requests = 0
        svc.client.stats.by_endpoint.clear()
        busy0 = limiter.busy_seconds
        server_cpu0 = sandbox.cpu_by_process()
        cpu0 = time.process_time()
        started = time.perf_counter()
        async with asyncio.TaskGroup() as group:

            async def consume(name: str, pages: Any, *, child: bool = False) -> list[dict]:
                n = 0
                kept: list[dict] = []
                async for page in pages:
                    n += len(page)
                    if decode and isinstance(page, LazyRecords):
                        page.records()
                    if name in ("accommodation_types", "journal_reports"):
                        kept.extend(page)
                counts[name] += n
                lists[name] += 1
                list_sizes.append((name, n))
                return kept

            async def with_children(name: str) -> None:
                parents = await consume(name, getattr(svc, name)())
                for record in parents:
                    if name == "accommodation_types":
                        group.create_task(
                            consume("rates", svc.rates(record["resourceId"]), child=True)
                        )
                    else:
                        group.create_task(
                            consume(
                                "journal_entries",
                                svc.journal_entries(record["journalReportId"]),
                                child=True,
                            )
                        )

            for name in TOP_LISTS:
                if name in ("accommodation_types", "journal_reports"):
                    group.create_task(with_children(name))
                else:
                    group.create_task(consume(name, getattr(svc, name)()))
        wall = time.perf_counter() - started
        client_cpu = time.process_time() - cpu0
        after = sandbox.cpu_by_process()
        server_cpu = sum(after) - sum(server_cpu0)
        by_process = after  # per process during the read, when the workers lived through it
        if len(after) == len(server_cpu0):
            by_process = [a - b for a, b in zip(after, server_cpu0, strict=True)]
        busy = limiter.busy_seconds - busy0
        stats = svc.stats
    requests = stats["requests"] - stats["by_endpoint"].get("/authenticate", 0)
    minimum = sum(max(1, math.ceil(n / sizes.get(name, page_size))) for name, n in list_sizes)
    return {
        "records": dict(counts),
        "records_total": sum(counts.values()),
        "requests": requests,
        "minimum_requests": minimum,
        "wall_seconds": wall,
        "client_cpu_seconds": client_cpu,
        "server_cpu_seconds": server_cpu,
        "server_cpu_seconds_by_process": by_process,  # the server's, then each worker's
        "slot_utilisation": busy / (CAP * wall) if wall > 0 else 0.0,
        "page_sizes": {"default": page_size, "reservation_details": sizes["reservation_details"]},
        "bytes_received": stats.get("bytes_received"),
        "peak_in_flight": limiter.peak,
        "retries": stats["retries"],
        "by_endpoint": stats["by_endpoint"],
    }


def efficiency(requests: int, latency_ms: float, wall: float) -> float:
    return (requests * latency_ms / 1000 / CAP) / wall if wall > 0 else 0.0


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="medium")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--page-size", type=int, default=DEFAULT_PAGE_SIZE)
    parser.add_argument(
        "--details-page-size",
        type=int,
        default=DEFAULT_DETAILS_PAGE_SIZE,
        help="page size of reservation details (capped by --page-size)",
    )
    parser.add_argument(
        "--warm-cache",
        action="store_true",
        help="the sandbox pre-encodes the lists at start (not timed)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="full reads against the same sandbox (the first one cold)",
    )
    parser.add_argument(
        "--decoded-read",
        action="store_true",
        help="one more read that decodes every page in the reading process as it arrives",
    )
    parser.add_argument(
        "--encode-cache-mb",
        type=float,
        default=None,
        help="the sandbox's encode cache (default: the sandbox's own default)",
    )
    parser.add_argument(
        "--encode-workers",
        type=int,
        default=0,
        help="the sandbox's encode workers (sandbox/server/encode_pool.py)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-dlt", action="store_true")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with start_sandbox(
        args.scale,
        seed=args.seed,
        latency_ms=args.latency_ms,
        warm=args.warm_cache,
        encode_cache_mb=args.encode_cache_mb,
        encode_workers=args.encode_workers,
    ) as sandbox:
        startup = time.perf_counter() - started
        runs: list[dict[str, Any]] = []
        reads = [False] * max(1, args.repeat) + ([True] if args.decoded_read else [])
        for decode in reads:
            sandbox.reset()
            ours = asyncio.run(
                read_with_client(sandbox, args.page_size, args.details_page_size, decode=decode)
            )
            ours["decoded_in_reader"] = decode
            server = sandbox.stats()
            ours["server_peak_in_flight"] = server["peakInFlight"]
            ours["server_throttled"] = server["throttled"]
            ours["efficiency"] = efficiency(ours["requests"], args.latency_ms, ours["wall_seconds"])
            ours["overhead"] = ours["requests"] / max(1, ours["minimum_requests"]) - 1
            ours["server_peak_rss_mb"] = sandbox.peak_rss_mb()
            ours["server_cache"] = server.get("encodeCache")
            runs.append(ours)
        peer = None
        if not args.skip_dlt:
            cpu0 = sandbox.cpu_seconds()
            client0 = time.process_time()
            from bench.dlt_peer import read_with_dlt

            peer = read_with_dlt(sandbox, args.page_size, TOP_LISTS)
            peer["client_cpu_seconds"] = time.process_time() - client0
            peer["server_cpu_seconds"] = sandbox.cpu_seconds() - cpu0
            peer["efficiency"] = efficiency(peer["requests"], args.latency_ms, peer["wall_seconds"])

    details = min(args.page_size, args.details_page_size)
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "scale": args.scale,
        "latency_ms": args.latency_ms,
        "page_size": args.page_size,
        "details_page_size": details,
        "warm_cache": args.warm_cache,
        "encode_cache_mb": args.encode_cache_mb,
        "encode_workers": args.encode_workers,
        "cap": CAP,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "sandbox_startup_seconds": startup,
        "reservoir": runs[0],
        "reservoir_runs": runs,
        "dlt_rest_api": peer,
    }
    rows = [
        (f"reservoir #{i + 1}" + (" dec" if r["decoded_in_reader"] else ""), r)
        for i, r in enumerate(runs)
    ]
    rows += [("dlt rest_api", peer)] if peer else []
    print(
        f"\nscale={args.scale} latency={args.latency_ms:.0f}ms page_size={args.page_size} "
        f"details_page_size={details} cap={CAP} load={os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'client':<18}{'records':>9}{'requests':>9}{'minimum':>8}{'wall s':>8}"
        f"{'effic.':>7}{'slots':>7}{'cli cpu':>8}{'srv cpu':>8}{'peak':>5}"
    )
    for name, r in rows:
        print(
            f"{name:<18}{r['records_total']:>9}{r['requests']:>9}"
            f"{r.get('minimum_requests', ''):>8}{r['wall_seconds']:>8.2f}"
            f"{r['efficiency']:>7.2f}{r.get('slot_utilisation', float('nan')):>7.2f}"
            f"{r['client_cpu_seconds']:>8.1f}{r['server_cpu_seconds']:>8.1f}"
            f"{r.get('server_peak_in_flight', r['peak_in_flight']):>5}"
        )
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = OUT_DIR / f"extract-{args.scale}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(result, indent=2, default=str))
    print(f"\nwritten to {out}")
    return result


if __name__ == "__main__":
    main()
