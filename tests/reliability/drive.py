"""A small driver for kill-and-restart tests: one extraction run in its own process.

`python -m tests.reliability.drive` reads the RESERVOIR_* variables (as `reservoir run` does),
prints `spec <name>` before each endpoint so a test can kill it at a chosen point, and `done
<records>` at the end. It runs the same `run_extraction` as the in-process fault matrix.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.reliability.harness import Target, run_extraction


def main() -> int:
    env = os.environ
    target = Target(
        env["RESERVOIR_BASE_URL"],
        env["RESERVOIR_CLIENT_ID"],
        env["RESERVOIR_CLIENT_SECRET"],
        env.get("RESERVOIR_SCOPE", ""),
    )

    def announce(name: str) -> None:
        print(f"spec {name}", flush=True)

    result = run_extraction(target, Path(env["RESERVOIR_DATA_DIR"]), on_spec=announce)
    print(f"done {result.records}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
