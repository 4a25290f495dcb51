"""One full pipeline run against the embedded sandbox, shared by the end-to-end tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from pipelines.runner import ServiceTarget, run_pipeline
from pipelines.settings import Settings
from pipelines.summary import RunSummary
from sandbox.runner import SandboxSettings, run_sandbox


@dataclass
class PipelineRun:
    settings: Settings
    summary: RunSummary
    handle: Any  # the sandbox handle (world, stats)


def _run(
    tmp_path_factory: pytest.TempPathFactory, sandbox: SandboxSettings
) -> Iterator[PipelineRun]:
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
    """Session-scoped: every e2e module (one xdist group) reads the same run."""
    yield from _run(tmp_path_factory, SandboxSettings(seed=7, scale="small"))


@pytest.fixture(scope="session")
def strict_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PipelineRun]:
    """The main job against the strict profile (tests/e2e/test_strict_profile.py, its own
    xdist group so that it runs beside the default run)."""
    yield from _run(tmp_path_factory, SandboxSettings(seed=7, scale="small", profile="strict"))
