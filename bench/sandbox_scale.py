"""Benchmark: how long the sandbox takes to generate its world at each scale, and how much memory.

    python -m bench.sandbox_scale                      # small and medium
    python -m bench.sandbox_scale --scales small medium large --seed 7

Each scale is generated in a fresh subprocess (so peak RSS is that world's alone): wall time,
CPU time (user + system of the child, the figure to compare on a shared machine), peak RSS
(`resource.getrusage(...).ru_maxrss`) and the size of every collection. Results: a table on
stdout and JSON in bench/out/sandbox_scale-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "out"

_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
c0 = time.process_time()
from sandbox.world import World
t_import = time.perf_counter() - t0
t1 = time.perf_counter()
c1 = time.process_time()
w = World(seed=int(sys.argv[2]), scale=sys.argv[1])
wall = time.perf_counter() - t1
cpu = time.process_time() - c1
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "import_s": round(t_import, 3),
    "peak_rss_mb": round(ru.ru_maxrss / 1024, 1),
    "reservations": len(w.t["reservations"]), "collections": w.stats(),
}))
"""


def run_scale(scale: str, seed: int, timeout: float) -> dict[str, Any]:
    """Generate one world in a child process; its own figures plus the parent-side wall time."""
    root = Path(__file__).resolve().parent.parent
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, scale, str(seed)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    total = time.perf_counter() - t0
    if proc.returncode != 0:
        return {
            "scale": scale,
            "seed": seed,
            "error": proc.stderr[-2000:],
            "returncode": proc.returncode,
            "process_wall_s": round(total, 3),
        }
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out.update({"scale": scale, "seed": seed, "process_wall_s": round(total, 3)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--scales", nargs="+", default=["small", "medium"], choices=["small", "medium", "large"]
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per scale")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    results = []
    print(f"{'scale':<8}{'reservations':>13}{'wall s':>9}{'cpu s':>9}{'peak RSS MB':>13}")
    for scale in args.scales:
        res = run_scale(scale, args.seed, args.timeout)
        results.append(res)
        if "error" in res:
            print(f"{scale:<8} failed (rc {res['returncode']}): {res['error'][-300:]}")
            continue
        print(
            f"{scale:<8}{res['reservations']:>13,}{res['wall_s']:>9.2f}{res['cpu_s']:>9.2f}"
            f"{res['peak_rss_mb']:>13,.0f}"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"sandbox_scale-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps({"python": sys.version.split()[0], "results": results}, indent=2))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
