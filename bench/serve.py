"""Benchmark: what a reader of `reservoir serve` waits for, over a real uvicorn on loopback.

    python -m bench.serve                   # small scale
    python -m bench.serve --scale medium

The lake comes from the sandbox world (`bench.models.generate_lake`), the warehouse from
`build_warehouse`; then each request below is sent 10 times after one warm-up and its median
and worst wall time reported, with the response size. The snapshot (`reservoir dashboard`) is
timed once. Results: a table on stdout and JSON in bench/out/serve-<scale>.json.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from bench.models import OUT_DIR, generate_lake

REPEAT = 10


def _requests(as_of: str) -> list[tuple[str, str]]:
    year = as_of[:4]
    return [
        ("page, default view", "/"),
        ("page, park + channel + drill-down", f"/?park=1&channel=1&month={as_of[:7]}"),
        (
            "feed, occupancy by night (1 year)",
            f"/api/metrics/occupancy?by=night&from={int(year) - 1}-{as_of[5:]}&to={as_of}",
        ),
        ("feed, adr_net by month x channel", "/api/metrics/adr_net?by=month,channel"),
        (
            "export, sales slice as Parquet (1 month)",
            f"/api/export/sales?format=parquet&from={as_of[:8]}01&to={as_of}",
        ),
    ]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="small", choices=["small", "medium", "large"])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    import duckdb

    from pipelines.dashboard import build_dashboard
    from pipelines.serve.app import create_app
    from warehouse.build import build_warehouse

    result: dict[str, Any] = {
        "scale": args.scale,
        "seed": args.seed,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        data_dir = Path(tmp)
        print(f"generating the {args.scale} lake ...", file=sys.stderr)
        result["lake"] = generate_lake(data_dir, args.scale, args.seed)
        warehouse = build_warehouse(data_dir).path
        con = duckdb.connect(str(warehouse), read_only=True)
        as_of = str(con.execute("select as_of from meta.build_settings").fetchone()[0])  # type: ignore[index]
        con.close()
        t0 = time.perf_counter()
        snapshot = build_dashboard(warehouse, data_dir / "dashboard.html")
        result["snapshot"] = {
            "seconds": round(time.perf_counter() - t0, 3),
            "mb": round(snapshot.stat().st_size / 1e6, 2),
        }
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(
            uvicorn.Config(create_app(warehouse), log_level="warning", lifespan="off")
        )
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        rows = []
        with httpx.Client(base_url=base, timeout=120) as client:
            for name, path in _requests(as_of):
                client.get(path).raise_for_status()
                times, size = [], 0
                for _ in range(REPEAT):
                    t0 = time.perf_counter()
                    got = client.get(path)
                    times.append(time.perf_counter() - t0)
                    size = len(got.content)
                rows.append(
                    {
                        "request": name,
                        "path": path,
                        "median_ms": round(statistics.median(times) * 1000),
                        "max_ms": round(max(times) * 1000),
                        "kb": round(size / 1000),
                    }
                )
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
    result["requests"] = rows
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = OUT_DIR / f"serve-{args.scale}.json"
    out.write_text(json.dumps(result, indent=2, default=str))
    print(
        f"scale {args.scale}: snapshot {result['snapshot']['seconds']} s, {result['snapshot']['mb']} MB"
    )
    print(f"{'request':42}{'median ms':>10}{'max ms':>8}{'kB':>7}")
    for row in rows:
        print(f"{row['request']:42}{row['median_ms']:>10}{row['max_ms']:>8}{row['kb']:>7}")
    print(f"results: {out}")
    return result


if __name__ == "__main__":
    main()
