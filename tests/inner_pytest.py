"""A pytest run of test files written into a temporary directory, in a child process, isolated
from this repository's configuration (no pytest.ini, no cache): for the tests of the suite's
own machinery (its timeouts, its xdist grouping)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_pytest_in(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m pytest <args>` over `folder`, with `folder` as its root and working directory."""
    isolated = ["-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir", str(folder)]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args, *isolated, str(folder)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
