"""Bad settings end in one line that says what to do: exit code != 0, no traceback.

Each case runs `reservoir run` in a child process with RESERVOIR_* variables, as a user would.
A bad setting must be reported before (or instead of) a long run: the service is probed once
with a short deadline and few retries before anything is written (`pipelines/runner.py`), so
each case asserts that the data directory holds no lake file afterwards. The child's time is
bounded only against a hang: on a loaded host its imports alone can take tens of seconds.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.runner import SandboxHandle
from tests.ports import free_port
from tests.reliability.conftest import Figures
from tests.reliability.harness import Target, run_cli

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("reliability")]
HANG_SECONDS = 240.0  # a bound against a hang, not a speed check


def wrong_secret(sb: SandboxHandle, tmp: Path) -> dict[str, str]:
    target = Target(sb.base_url, sb.client_id, "not-the-secret", sb.scope)
    return target.env(tmp / "data")


def missing_secret(sb: SandboxHandle, tmp: Path) -> dict[str, str]:
    env = Target.of(sb).env(tmp / "data")
    del env["RESERVOIR_CLIENT_SECRET"]
    return env


def unreachable(sb: SandboxHandle, tmp: Path) -> dict[str, str]:
    url = f"http://127.0.0.1:{free_port()}/service/v2"
    return Target(url, sb.client_id, sb.client_secret, sb.scope).env(tmp / "data")


def plain_http_remote(sb: SandboxHandle, tmp: Path) -> dict[str, str]:
    url = "http://reservations.example.com/service/v2"
    return Target(url, sb.client_id, sb.client_secret, sb.scope).env(tmp / "data")


def unwritable_data_dir(sb: SandboxHandle, tmp: Path) -> dict[str, str]:
    blocker = tmp / "a-file"
    blocker.write_text("not a directory")  # works as root too, unlike chmod
    return Target.of(sb).env(blocker / "data")


# case -> (environment, words the message must contain, any of them, case-insensitive)
CASES: dict[str, tuple[Callable[[SandboxHandle, Path], dict[str, str]], tuple[str, ...]]] = {
    "wrong-secret": (wrong_secret, ("authentication", "secret")),
    "missing-secret": (missing_secret, ("RESERVOIR_CLIENT_SECRET",)),
    "unreachable-url": (unreachable, ("reach", "connect", "unavailable", "down")),
    "plain-http-remote": (plain_http_remote, ("https",)),
    "unwritable-data-dir": (unwritable_data_dir, ("RESERVOIR_DATA_DIR",)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_setting_is_one_line_that_says_what_to_do(
    case: str, sandbox: SandboxHandle, tmp_path: Path, figures: Figures
) -> None:
    make_env, words = CASES[case]
    env = make_env(sandbox, tmp_path)
    figures.bad_settings_cases += 1
    try:
        done = run_cli(["run", "-q", "--mode", "full"], env, timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`reservoir run` did not report the bad setting within {HANG_SECONDS:.0f} s")
    stderr = done.stderr.strip()
    assert done.returncode != 0, done.stdout[-1000:]
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, stderr[-3000:]
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr[-3000:]
    assert lines[0].startswith("error: "), lines[0]
    assert any(w.lower() in lines[0].lower() for w in words), lines[0]
    data = Path(env["RESERVOIR_DATA_DIR"])
    written = sorted(p.relative_to(data) for p in data.rglob("*.parquet")) if data.is_dir() else []
    assert not written, f"a bad setting wrote to the lake before it was reported: {written}"
    if "CLIENT_SECRET" in env:
        assert env["RESERVOIR_CLIENT_SECRET"] not in done.stderr + done.stdout
