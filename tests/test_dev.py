"""`reservoir dev`: the UI comes up with the embedded sandbox, says how to move its clock, prints
no deprecation warning, and SIGTERM stops everything it started (the UI's whole process group)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.ports import free_port
from tests.reliability.harness import ROOT, VENV_BIN

# In `make chaos`: on a clean-clone CI run a Dagster code server outlived the 30 s this test
# allows after SIGTERM (it passed on the run before); to be made deterministic (issue notes).
pytestmark = [pytest.mark.sandbox, pytest.mark.chaos, pytest.mark.xdist_group("dagster-dev")]


def _processes() -> list[tuple[int, int, int, str]]:
    """(pid, parent pid, session id, command line) of every process."""
    # -ww: whole command lines; ps cuts them at 80 columns when its output is not a terminal,
    # and a checkout with a longer path then loses the word "dagster" from the UI's command
    out = subprocess.run(["ps", "-ww", "-eo", "pid,ppid,sid,args"], capture_output=True, text=True)
    rows = []
    for line in out.stdout.splitlines()[1:]:
        pid, ppid, sid, args = line.split(None, 3)
        rows.append((int(pid), int(ppid), int(sid), args))
    return rows


def _ui_session(dev_pid: int) -> int:
    """The session of the `dagster dev` that `reservoir dev` started (its own process group)."""
    for _pid, ppid, sid, args in _processes():
        if ppid == dev_pid and "dagster" in args:
            return sid
    children = [args for _, ppid, _, args in _processes() if ppid == dev_pid]
    raise AssertionError(f"reservoir dev started no dagster dev; its children: {children}")


def _in_session(sid: int) -> list[str]:
    return [args for _, _, s, args in _processes() if s == sid]


def test_sigterm_stops_the_ui_and_everything_it_started(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RESERVOIR_", "DAGSTER_"))}
    env["RESERVOIR_DATA_DIR"] = str(tmp_path / "data")
    log = tmp_path / "dev.log"
    with log.open("wb") as out:
        dev = subprocess.Popen(
            [str(VENV_BIN / "reservoir"), "dev", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert dev.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
        ui = _ui_session(dev.pid)
        assert len(_in_session(ui)) > 2  # the UI's webserver, daemon, code server

        dev.send_signal(signal.SIGTERM)
        assert dev.wait(timeout=60) == 0
        deadline = time.monotonic() + 30
        while (_in_session(ui) or _in_session(dev.pid)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _in_session(ui) == [] and _in_session(dev.pid) == []
    finally:
        if dev.poll() is None:
            os.killpg(dev.pid, signal.SIGKILL)
    text = log.read_text()
    assert "sandbox advance --url http://127.0.0.1:" in text
    assert "Warning" not in text, text[-3000:]
