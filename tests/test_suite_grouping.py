"""The suite's parallel layout: `make test` runs `pytest -n 2 --dist loadgroup`, and the tests
that share an expensive session fixture (one pipeline run of a sandbox world) carry the same
`xdist_group` so that one worker builds it once. A pytest or pytest-xdist upgrade that silently
stops grouping doubles those builds; this test runs a tiny grouped suite and fails then."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.inner_pytest import run_pytest_in

GROUPED = """
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("shared")


@pytest.mark.parametrize("i", range(4))
def test_grouped(i: int) -> None:
    Path(f"worker-{i}").write_text(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_tests_of_one_xdist_group_run_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text(GROUPED)
    (tmp_path / "test_b.py").write_text(GROUPED.replace("worker-", "other-"))
    done = run_pytest_in(tmp_path, "-n", "2", "--dist", "loadgroup", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {p.read_text() for p in tmp_path.glob("*-*") if p.suffix == ""}
    assert len(list(tmp_path.glob("worker-*"))) == len(list(tmp_path.glob("other-*"))) == 4
    assert len(workers) == 1, f"one group ran on {sorted(workers)}: loadgroup is not grouping"


pytestmark = pytest.mark.timeout(180)
