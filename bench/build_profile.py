"""Benchmark: the full warehouse build on an existing lake, with each model's wall and CPU seconds.

    python -m bench.build_profile --data-dir /tmp/large-run/data   # the lake of `bench.run`
    /usr/bin/time -v python -m bench.build_profile --data-dir ...   # and the peak RSS

`bench.models` regenerates its lake before it builds (25 minutes at large on a busy host); this
one builds the lake a run already left in `--data-dir` (it replaces that directory's
warehouse.duckdb). CPU seconds per model are `time.process_time()` around the model's statement,
so they count DuckDB's threads. Results: the slowest models on stdout and every model in
bench/out/build-profile.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent / "out"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)

    import warehouse.build as build

    cpu: dict[str, float] = {}
    build_model = build._build_model

    def timed(con: Any, model: Any) -> Any:
        c0 = time.process_time()
        result = build_model(con, model)
        cpu[model.qualified] = time.process_time() - c0
        return result

    build._build_model = timed  # type: ignore[assignment]
    load = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    result = build.build_warehouse(args.data_dir)
    wall, total_cpu = time.perf_counter() - t0, time.process_time() - c0
    models = {
        q: {"wall_s": round(m.seconds, 2), "cpu_s": round(cpu[q], 2), "rows": m.row_count}
        for q, m in sorted(result.models.items(), key=lambda kv: -cpu[kv[0]])
    }
    out = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "data_dir": str(args.data_dir),
        "load_average_start": [round(x, 2) for x in load],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "wall_s": round(wall, 1),
        "cpu_s": round(total_cpu, 1),
        "models": models,
    }
    print(f"full build: wall {wall:.1f} s, CPU {total_cpu:.1f} s, {len(models)} models")
    for q, m in list(models.items())[: args.top]:
        print(f"  {m['cpu_s']:7.2f} CPU s {m['wall_s']:7.2f} s  {q} ({m['rows']:,} rows)")
    OUT_DIR.mkdir(exist_ok=True)
    (OUT_DIR / "build-profile.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
