"""The Dagster instance on PostgreSQL (RESERVOIR_DAGSTER_PG_URL): `reservoir run`'s main job
against the embedded sandbox records its run, every materialization and every asset-check
evaluation in a real PostgreSQL (Debian's package, a throwaway cluster), writes nothing of the
instance to SQLite files, and the marts still equal the sandbox's ground truth."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from rich.console import Console

from pipelines.runner import ServiceTarget, run_pipeline
from pipelines.settings import Settings, SettingsError
from sandbox.runner import SandboxSettings, run_sandbox
from tests.postgres_server import postgres_cluster
from tests.truth import nights_mismatch

pytestmark = [pytest.mark.postgres, pytest.mark.sandbox, pytest.mark.slow]


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with postgres_cluster() as url:
        yield url


def _fetch(url: str, sql: str) -> list[tuple]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as con:
            return [tuple(r) for r in con.execute(sa.text(sql)).fetchall()]
    finally:
        engine.dispose()


def _sessions(url: str) -> int:
    """Connections the server has accepted since it started (PostgreSQL 14+)."""
    ((count,),) = _fetch(url, "select sum(sessions) from pg_stat_database")
    return int(count)


def test_a_non_postgres_url_is_refused_with_what_to_do(tmp_path: Path) -> None:
    env = {"RESERVOIR_DATA_DIR": str(tmp_path), "RESERVOIR_DAGSTER_PG_URL": "sqlite:///x.db"}
    with pytest.raises(SettingsError, match=r"must be a PostgreSQL URL.*unset it"):
        Settings.from_env(env)


def test_settings_shows_the_url_without_its_password(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pipelines.cli import app

    url = "postgresql://dagster:pg-canary-pw@db.internal:5432/dagster"
    env = {"RESERVOIR_DATA_DIR": str(tmp_path), "RESERVOIR_DAGSTER_PG_URL": url, "COLUMNS": "250"}
    result = CliRunner().invoke(app, ["settings"], env=env)
    assert result.exit_code == 0, result.output
    assert "pg-canary-pw" not in result.output
    assert "postgresql://dagster:***@db.internal:5432/dagster" in result.output


def test_main_job_records_runs_materializations_and_checks_in_postgres(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESERVOIR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RESERVOIR_DAGSTER_PG_URL", pg_url)
    # Recorded so that teardown removes the home the run sets (later tests never see it).
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "not-used"))
    settings = Settings.from_env()
    assert pg_url not in repr(settings)  # the URL may hold a password
    sessions_before = _sessions(pg_url)
    with run_sandbox(SandboxSettings(seed=7, scale="small")) as handle:
        summary = run_pipeline(
            settings,
            mode="full",
            quiet=True,
            console=Console(file=open(os.devnull, "w")),  # noqa: SIM115
            target=ServiceTarget.from_sandbox(handle),
        )
        truth = handle.world.ground_truth()["nights"]

    config = (settings.dagster_home / "dagster.yaml").read_text()
    assert "env: RESERVOIR_DAGSTER_PG_URL" in config and pg_url not in config
    # The instance keeps its connections open (pipelines.pg_storage): a run asks PostgreSQL
    # about 5,000 transactions; with a connection per statement it opened about 3,000 sessions.
    sessions = _sessions(pg_url) - sessions_before
    assert "PooledPostgresStorage" in config and 0 < sessions < 300, sessions
    # Nothing of the instance's storage went to SQLite files beside it.
    assert not list(settings.dagster_home.rglob("*.db"))

    ((status, job),) = _fetch(
        pg_url, f"select status, pipeline_name from runs where run_id = '{summary.run_id}'"
    )
    assert (status, job) == ("SUCCESS", "main_job")
    materialized = {
        key
        for (key,) in _fetch(
            pg_url,
            "select distinct asset_key from event_logs where dagster_event_type = "
            f"'ASSET_MATERIALIZATION' and run_id = '{summary.run_id}'",
        )
    }
    lake = {k for k in materialized if '"lake"' in k}
    marts = {k for k in materialized if '"marts"' in k or "occupancy_daily" in k}
    assert len(lake) == len(summary.tables) and marts
    assert any("occupancy_daily" in k for k in materialized)
    checks = _fetch(
        pg_url,
        "select check_name, execution_status from asset_check_executions "
        f"where run_id = '{summary.run_id}'",
    )
    assert len(checks) == len(summary.checks) > 0
    assert {s for _, s in checks} <= {"SUCCEEDED", "FAILED"}
    # The same outcomes the run summary read back from the instance (a warning did not pass).
    assert sum(s == "SUCCEEDED" for _, s in checks) == sum(
        c.outcome == "passed" for c in summary.checks
    )

    # `reservoir status` reads the runs and checks back from PostgreSQL.
    from typer.testing import CliRunner

    from pipelines.cli import app

    status = CliRunner().invoke(app, ["status"], env={"COLUMNS": "200"})
    assert status.exit_code == 0, status.output
    assert summary.run_id[:8] in status.output
    passed = sum(s == "SUCCEEDED" for _, s in checks)
    assert f"checks (latest evaluation): {passed} passed" in " ".join(status.output.split())

    # The marts are right: nights available and sold per day, location and type, to the night.
    bad = nights_mismatch(settings.warehouse_path, truth)
    assert bad.empty, bad.head(20).to_string()
    assert int(truth["nights_sold"].sum()) > 1000
