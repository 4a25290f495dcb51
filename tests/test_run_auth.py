"""`reservoir run` against a service that answers a wrong credential with a 500 (the interface's
only documented authenticate error): the run stops within seconds with the one-line credential
message, not after minutes of retries with "did not answer" (README: "A wrong credential stops
the run at once with a one-line message")."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipelines.runner import RunError, ServiceTarget, preflight
from pipelines.settings import Settings
from service.errors import TEST_REFRESH_HINT
from tests.reliability.harness import run_cli
from tests.stub_service import STUB_SECRET, stub_service

FAST = 5.0  # seconds for the verdict, with the client's real backoff
CLI_LIMIT = 60.0  # the child process's start-up (Dagster imports) on a loaded machine included

CREDENTIALS_500 = '{"status": 500, "error": "INTERNAL_SERVER_ERROR", "message": "Bad credentials"}'
BARE_500 = '{"status": 500, "message": "Error occurred while processing"}'


def _preflight(base_url: str, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, base_url=base_url)
    preflight(settings, ServiceTarget(base_url, "stub-client", STUB_SECRET, "STB", today=None))


@pytest.mark.parametrize(
    ("body", "asked"), [(CREDENTIALS_500, 1), (BARE_500, 3)], ids=["names-credentials", "bare"]
)
def test_preflight_stops_in_seconds_with_the_credential_message(
    tmp_path: Path, body: str, asked: int
) -> None:
    with stub_service(500, body) as stub:
        started = time.monotonic()
        with pytest.raises(RunError) as info:
            _preflight(stub.base_url, tmp_path)
        elapsed = time.monotonic() - started
    message = str(info.value)
    assert elapsed < FAST, f"took {elapsed:.1f} s"
    assert stub.authentications == asked
    assert "authentication" in message and TEST_REFRESH_HINT in message
    assert "did not answer" not in message and STUB_SECRET not in message


def test_a_gateway_error_is_not_called_silence(tmp_path: Path) -> None:
    with stub_service(503, '{"message": "maintenance"}') as stub, pytest.raises(RunError) as info:
        _preflight(stub.base_url, tmp_path)
    assert "answered but kept failing" in str(info.value) and "503" in str(info.value)


@pytest.mark.slow
def test_reservoir_run_with_a_500_for_the_credentials_exits_with_one_line(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("RESERVOIR_", "DAGSTER_"))}
    with stub_service(500, CREDENTIALS_500) as stub:
        env = {**base, **stub.env(str(tmp_path / "data"))}
        started = time.monotonic()
        done = run_cli(["run", "-q", "--mode", "full"], env, timeout=CLI_LIMIT)
        elapsed = time.monotonic() - started
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: authentication refused"), lines
    assert "Bad credentials" in lines[0] and "client secret and scope" in lines[0]
    assert STUB_SECRET not in done.stdout + done.stderr
    assert stub.authentications == 1 and elapsed < CLI_LIMIT


def test_the_strict_sandbox_answers_a_wrong_secret_with_500_and_the_run_stops_at_once(
    tmp_path: Path,
) -> None:
    """The strict profile answers a refused credential as the real service documents it (500,
    "Error occurred while processing"); the preflight still stops within seconds and names the
    credentials."""
    from sandbox.runner import SandboxSettings, run_sandbox

    with run_sandbox(SandboxSettings(profile="strict")) as sandbox:
        import httpx

        answer = httpx.post(
            sandbox.base_url + "/authenticate",
            data={
                "grant_type": "client_credentials",
                "client_id": sandbox.client_id,
                "client_secret": "wrong-secret-123",
                "scope": sandbox.scope,
            },
        )
        assert answer.status_code == 500 and "Error occurred while processing" in answer.text
        settings = Settings(data_dir=tmp_path, base_url=sandbox.base_url)
        target = ServiceTarget(
            sandbox.base_url, sandbox.client_id, "wrong-secret-123", sandbox.scope, today=None
        )
        started = time.monotonic()
        with pytest.raises(RunError) as info:
            preflight(settings, target)
        assert time.monotonic() - started < FAST
        assert "secret" in str(info.value).lower() and "wrong-secret-123" not in str(info.value)


def test_a_configured_service_is_refused_before_dagster_is_imported(tmp_path: Path) -> None:
    """The CLI checks a configured service before it imports Dagster and the code location, so
    a bad credential costs about a second, not their imports' seconds of CPU."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("RESERVOIR_", "DAGSTER_"))}
    probe = (
        "import sys\n"
        "from pipelines.cli import app\n"
        "sys.argv = ['reservoir', 'run', '-q', '--mode', 'full']\n"
        "try:\n"
        "    app()\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code, 'dagster' in sys.modules, 'pipelines.runner' in sys.modules)\n"
    )
    with stub_service(500, CREDENTIALS_500) as stub:
        env = {**base, **stub.env(str(tmp_path / "data"))}
        done = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
        )
    assert done.stdout.split() == ["exit", "1", "False", "False"], done.stdout + done.stderr
    assert done.stderr.startswith("error: authentication refused"), done.stderr
    assert stub.authentications == 1
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("*.parquet"))
