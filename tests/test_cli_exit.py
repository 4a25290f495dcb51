"""The `reservoir` console entry ends its process without the interpreter's teardown, and loses
nothing a normal exit keeps: the exit code, buffered output, atexit handlers, running threads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The entry as the installed `reservoir` script runs it, with an atexit handler and a thread
# that is not a daemon registered first: both must have done their work when the process ends.
ENTRY = """
import atexit, sys, threading, time
from pathlib import Path

out = Path(sys.argv.pop(1))
atexit.register(lambda: (out / "atexit").write_text("ran"))

def late() -> None:
    time.sleep(0.3)
    (out / "thread").write_text("done")

threading.Thread(target=late).start()
print("printed before the command")  # still in stdout's buffer when the command ends
from pipelines.cli import main

sys.argv[0] = "reservoir"
sys.exit(main())
"""


def _reservoir(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RESERVOIR_")}
    env["RESERVOIR_DATA_DIR"] = str(tmp_path / "data")
    return subprocess.run(
        [sys.executable, "-c", ENTRY, str(tmp_path), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,  # pipes: stdout is block-buffered, so an unflushed exit loses it
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("args", "code", "expected"),
    [
        (["--help"], 0, "Extract every source area"),
        (["run", "--mode", "sometimes"], 2, "--mode must be auto, full or incremental"),
    ],
    ids=["help", "one-line error"],
)
def test_the_console_entry_keeps_what_an_exit_keeps(
    tmp_path: Path, args: list[str], code: int, expected: str
) -> None:
    done = _reservoir(tmp_path, *args)
    assert done.returncode == code, done.stderr[-2000:]
    assert expected in done.stdout + done.stderr
    assert done.stdout.startswith("printed before the command")
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "thread").read_text() == "done"
