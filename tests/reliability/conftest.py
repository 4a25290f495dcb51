"""Shared sandbox, fault-free reference and the figures of a reliability session.

One world per session is generated once and served by a session sandbox; tests that must not
share it (the `churn` fault changes the world) get their own. The fault-free reference is one
extraction from the shared sandbox. Under `-m chaos` the figures (faults tried, runs killed,
records checked, lost, duplicated) are written to bench/out/reliability.json and rendered into
docs/reliability.md at the end of the session.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pytest

from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from tests.reliability.harness import (
    ROOT,
    SLOW_SECONDS,
    Comparison,
    Snapshot,
    Target,
    run_extraction,
    snapshot,
)

SEED = 7
SCALE = "small"


@dataclass
class Figures:
    """What the session tried and found; one entry per check."""

    faults_tried: dict[str, int] = field(default_factory=dict)  # fault -> runs it was on in
    faults_injected: dict[str, int] = field(default_factory=dict)  # fault -> times it fired
    runs: int = 0
    runs_killed: int = 0
    records_checked: int = 0
    records_lost: int = 0
    records_duplicated: int = 0
    records_changed: int = 0
    records_quarantined: int = 0
    quarantined_without_reason: int = 0
    peak_in_flight: int = 0
    concurrency_limit: int = 0
    bad_input_cases: int = 0
    bad_settings_cases: int = 0
    secret_files_scanned: int = 0
    secret_leaks: int = 0
    cases: list[dict[str, object]] = field(default_factory=list)

    def add_run(
        self,
        name: str,
        comparison: Comparison,
        *,
        faults: dict[str, float],
        injected: dict[str, int] | None = None,
        killed: int = 0,
        quarantined: int = 0,
        peak: int = 0,
        limit: int = 0,
    ) -> None:
        self.runs += 1 + killed
        self.runs_killed += killed
        for f in faults:
            self.faults_tried[f] = self.faults_tried.get(f, 0) + 1
        for f, n in (injected or {}).items():
            if n:
                self.faults_injected[f] = self.faults_injected.get(f, 0) + n
        self.records_checked += comparison.checked
        self.records_lost += len(comparison.lost)
        self.records_duplicated += sum(n for _, n in comparison.duplicated)
        self.records_changed += len(comparison.changed) + len(comparison.unexpected)
        self.records_quarantined += quarantined
        self.peak_in_flight = max(self.peak_in_flight, peak)
        self.concurrency_limit = max(self.concurrency_limit, limit)
        self.cases.append(
            {
                "case": name,
                "faults": faults,
                "killed": killed,
                "checked": comparison.checked,
                "lost": len(comparison.lost),
                "duplicated": sum(n for _, n in comparison.duplicated),
                "changed": len(comparison.changed) + len(comparison.unexpected),
                "quarantined": quarantined,
                "peak_in_flight": peak,
            }
        )


_FIGURES = Figures()


def _chaos_session(config: pytest.Config) -> bool:
    expr = (config.getoption("markexpr", "") or "").replace(" ", "")
    return "chaos" in expr and "notchaos" not in expr


@pytest.fixture(scope="session")
def figures() -> Figures:
    return _FIGURES


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Only `make chaos` (the whole suite) rewrites the figures; a single chaos test run by hand
    # would otherwise replace them with its own.
    if not _chaos_session(session.config) or _FIGURES.runs == 0:
        return
    if os.environ.get("CHAOS_REPORT") != "1":
        return
    out = ROOT / "bench" / "out" / "reliability.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = asdict(_FIGURES)
    data["exit_status"] = int(exitstatus)
    data["command"] = "make chaos  (pytest -m chaos -p no:xdist tests)"
    out.write_text(json.dumps(data, indent=2, default=str))
    from bench.reliability_report import write_report

    write_report(out, ROOT / "docs" / "reliability.md")


@pytest.fixture(scope="session")
def world():  # type: ignore[no-untyped-def]
    from sandbox.world import World

    return World(seed=SEED, scale=SCALE)


@pytest.fixture(scope="session")
def sandbox(world) -> Iterator[SandboxHandle]:  # type: ignore[no-untyped-def]
    settings = SandboxSettings(seed=SEED, scale=SCALE, slow_seconds=SLOW_SECONDS)
    with run_sandbox(settings, world=world) as handle:
        yield handle


@pytest.fixture(scope="session")
def reference_dir(sandbox: SandboxHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fault-free extraction of the shared world (nobody else writes here)."""
    data_dir = tmp_path_factory.mktemp("reference")
    sandbox.faults.configure({})
    run_extraction(Target.of(sandbox), data_dir)
    return data_dir


@pytest.fixture(scope="session")
def reference(reference_dir: Path) -> Snapshot:
    ref = snapshot(reference_dir)
    assert all(state.duplicate_keys == 0 for state in ref.values())
    assert sum(len(s.rows) for s in ref.values()) > 10_000
    return ref
