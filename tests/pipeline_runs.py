"""The main job's run against the embedded sandbox, as the session fixtures of the end-to-end
and `reservoir serve` tests make it (tests/e2e/conftest.py, tests/serve/conftest.py), and the
default world's full run they share (`full_run`, registered by tests/conftest.py so that both
folders see one fixture: a run of seed 7, small, is ~9 CPU s)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # imported when a run is made: this module loads with every test session
    from pipelines.settings import Settings
    from pipelines.summary import RunSummary
    from sandbox.runner import SandboxSettings
    from tests.sandbox.test_process import ReadmeRun


@dataclass
class PipelineRun:
    settings: Settings
    summary: RunSummary
    handle: Any  # the sandbox handle (world, stats)


def main_job_run(
    tmp_path_factory: pytest.TempPathFactory, sandbox: SandboxSettings
) -> Iterator[PipelineRun]:
    """A full run of the main job into a new data directory, the sandbox served while the
    fixture lives."""
    from rich.console import Console

    from pipelines.runner import ServiceTarget, run_pipeline
    from pipelines.settings import Settings
    from sandbox.runner import run_sandbox

    data_dir = tmp_path_factory.mktemp("data")
    settings = Settings(data_dir=Path(data_dir))
    with run_sandbox(sandbox) as handle:
        saved = os.environ.get("DAGSTER_HOME")
        try:
            summary = run_pipeline(
                settings,
                mode="full",
                quiet=True,
                console=Console(file=open(os.devnull, "w")),  # noqa: SIM115
                target=ServiceTarget.from_sandbox(handle),
            )
        finally:  # restored at once: the session's other tests never see the run's home
            if saved is None:
                os.environ.pop("DAGSTER_HOME", None)
            else:
                os.environ["DAGSTER_HOME"] = saved
        yield PipelineRun(settings, summary, handle)


@pytest.fixture(scope="session")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PipelineRun]:
    """Session-scoped: the default world (seed 7, small), read by every e2e module and copied by
    the serve tests, all of one xdist group (`e2e`) so that one worker makes it once."""
    from sandbox.runner import SandboxSettings

    yield from main_job_run(tmp_path_factory, SandboxSettings(seed=7, scale="small"))


@pytest.fixture(scope="session")
def readme_run(tmp_path_factory: pytest.TempPathFactory) -> ReadmeRun:
    """The README's first command, `reservoir run -q`, in a new folder to its end: the embedded
    sandbox (seed 7, small) in a child process, mode auto on an empty data directory, so the
    bootstrap. Made once (xdist group `readme_run`, ~9 CPU s): tests/sandbox/test_process.py
    asserts the command, its output and its processes; tests/e2e/test_run_checks.py copies its
    data directory and goes on from that bootstrap with the event feed."""
    from tests.sandbox.test_process import run_to_the_end

    return run_to_the_end(tmp_path_factory.mktemp("readme-run"))
