"""A full disk under Dagster's store ends `reservoir run` with one line that says what to do
(it printed a 93-line SQLAlchemy traceback), and the next run on a disk with room completes."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.runner import SandboxHandle
from tests.reliability.harness import Target, run_cli

# Two whole runs through `reservoir run` (~22 s of CI): `make chaos`.
pytestmark = [pytest.mark.sandbox, pytest.mark.chaos, pytest.mark.xdist_group("reliability")]


@pytest.fixture
def tiny_dagster_home(tmp_path: Path) -> Iterator[Path]:
    """`data/dagster_home` on a 600 KiB tmpfs (needs the right to mount, as root in CI)."""
    home = tmp_path / "data" / "dagster_home"
    home.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(home)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip()}): run as root")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)


def test_a_full_disk_is_one_line_and_the_next_run_completes(
    sandbox: SandboxHandle, tiny_dagster_home: Path
) -> None:
    data = tiny_dagster_home.parent
    env = Target.of(sandbox).env(data)
    done = run_cli(["run", "-q"], env)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert lines[0].startswith("error: the disk holding") and "RESERVOIR_DATA_DIR" in lines[0]

    subprocess.run(["umount", "-l", str(tiny_dagster_home)], check=True)  # room again
    again = run_cli(["run", "-q"], env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "checks:" in again.stdout and "0 failed" in again.stdout, again.stdout[-2000:]
