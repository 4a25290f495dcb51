"""The command line as a user meets it: accurate help, one-line errors, secrets hidden."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipelines.cli import app

runner = CliRunner()

COMMANDS = [
    (
        [],
        [
            "run",
            "doctor",
            "status",
            "sql",
            "catalog",
            "dashboard",
            "serve",
            "export",
            "dev",
            "settings",
            "sandbox",
            "webhooks",
        ],
    ),
    (["catalog"], ["name", "grain", "lake.<table>"]),
    (
        ["run"],
        ["--mode", "--select", "--scale", "--profile", "--quiet", "--tenant", "--all-tenants"],
    ),
    (["doctor"], ["--json", "request budget", "Exit code 0"]),
    (["status"], ["cursor", "--tenant"]),
    (["sql"], ["read-only"]),
    (["dashboard"], ["--out", "--today"]),
    (["serve"], ["--host", "--port", "metrics feed"]),
    (["export"], ["--by", "--where", "--format", "--out"]),
    (["dev"], ["Dagster UI"]),
    (["sandbox"], ["serve", "advance"]),
    (
        ["sandbox", "serve"],
        [
            "--seed",
            "--scale",
            "--latency-ms",
            "--max-page-size",
            "--faults",
            "--late-event-share",
            "--profile",
        ],
    ),
    (["sandbox", "advance"], ["--hours"]),
    (["webhooks", "serve"], ["--port", "--body-only-hmac"]),
]


@pytest.mark.parametrize(
    ("args", "words"), COMMANDS, ids=[" ".join(a) or "reservoir" for a, _ in COMMANDS]
)
def test_help_names_every_option(args: list[str], words: list[str]) -> None:
    result = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for word in words:
        assert word in result.output, f"{word!r} missing from `reservoir {' '.join(args)} --help`"


def test_settings_hides_secrets(tmp_path: Path) -> None:
    env = {"RESERVOIR_CLIENT_SECRET": "s3cret-canary", "RESERVOIR_SCOPE": "ABC", "COLUMNS": "200"}
    result = runner.invoke(app, ["settings"], env=env)
    assert result.exit_code == 0
    assert "s3cret-canary" not in result.output
    assert "RESERVOIR_CLIENT_SECRET" in result.output and "(set)" in result.output
    assert "ABC" in result.output


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["sql", "select 1"], {}, "no warehouse at"),
        (["dashboard"], {}, "no warehouse at"),
        (["serve"], {}, "no warehouse at"),
        (["export", "occupancy"], {}, "no warehouse at"),
        (["run"], {"RESERVOIR_BASE_URL": "https://service.example/v2"}, "RESERVOIR_CLIENT_ID"),
        (["run"], {"RESERVOIR_MAX_CONCURRENCY": "40"}, "between 1 and 15"),
        (["run", "--mode", "sometimes"], {}, "--mode must be"),
        (["run", "--profile", "lenient"], {}, "--profile must be"),
        (["webhooks", "serve"], {}, "RESERVOIR_WEBHOOK_SECRET is not set"),
    ],
    ids=[
        "sql-no-warehouse",
        "dashboard-no-warehouse",
        "serve-no-warehouse",
        "export-no-warehouse",
        "url-without-credentials",
        "concurrency-cap",
        "bad-mode",
        "bad-profile",
        "webhooks-no-secret",
    ],
)
def test_errors_are_one_line_that_says_what_to_do(
    tmp_path: Path, args: list[str], env: dict[str, str], expected: str
) -> None:
    full_env = {"RESERVOIR_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200", **env}
    result = runner.invoke(app, args, env=full_env)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert expected in lines[0]


def test_sandbox_serve_passes_the_late_event_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    import sandbox.runner

    seen: list[Any] = []
    monkeypatch.setattr(sandbox.runner, "serve", lambda settings, **_: seen.append(settings))
    args = ["sandbox", "serve", "--late-event-share", "0.25", "--late-event-lag-seconds", "60"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (seen[0].late_event_share, seen[0].late_event_lag_seconds) == (0.25, 60.0)

    bad = runner.invoke(app, ["sandbox", "serve", "--late-event-share", "1.5"])
    assert bad.exit_code != 0 and "--late-event-share must be between 0 and 1" in bad.output
    assert len(seen) == 1


def test_dot_env_is_read_and_the_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`.env` in the working directory supplies unset settings; `settings` says where each
    value came from and checks them."""
    (tmp_path / ".env").write_text(
        "RESERVOIR_MAX_CONCURRENCY=7\nRESERVOIR_SCOPE=ENV\nRESERVOIR_CLIENT_SECRET=from-file\n"
        "OTHER_TOOL_SETTING=ignored\n"
    )
    monkeypatch.chdir(tmp_path)
    for name in ("RESERVOIR_MAX_CONCURRENCY", "RESERVOIR_SCOPE", "RESERVOIR_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    result = runner.invoke(app, ["settings"], env={"RESERVOIR_SCOPE": "XYZ", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines() if line.strip()}
    assert (
        " 7 " in lines["RESERVOIR_MAX_CONCURRENCY"] and ".env" in lines["RESERVOIR_MAX_CONCURRENCY"]
    )
    assert "XYZ" in lines["RESERVOIR_SCOPE"] and "environment" in lines["RESERVOIR_SCOPE"]
    assert "from-file" not in result.output and "(set)" in lines["RESERVOIR_CLIENT_SECRET"]
    assert "settings are valid" in result.output
    import os

    assert "OTHER_TOOL_SETTING" not in os.environ  # only RESERVOIR_* settings are taken
    for name in ("RESERVOIR_MAX_CONCURRENCY", "RESERVOIR_CLIENT_SECRET"):
        os.environ.pop(name, None)


def test_settings_says_when_a_setting_is_invalid(tmp_path: Path) -> None:
    result = runner.invoke(app, ["settings"], env={"RESERVOIR_MAX_CONCURRENCY": "99"})
    assert result.exit_code != 0 and "between 1 and 15" in result.output


def test_sandbox_serve_passes_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    import sandbox.runner

    seen: list[Any] = []
    monkeypatch.setattr(sandbox.runner, "serve", lambda settings, **_: seen.append(settings))
    result = runner.invoke(app, ["sandbox", "serve", "--profile", "strict"])
    assert result.exit_code == 0, result.output
    assert seen[0].profile == "strict" and seen[0].strict
    bad = runner.invoke(app, ["sandbox", "serve", "--profile", "lenient"])
    assert bad.exit_code != 0 and "--profile must be default or strict" in bad.output
    assert len(seen) == 1


def test_catalog_lists_the_marts_and_describes_each_column() -> None:
    """Before any run (no warehouse needed): the marts with their grain, then one mart's and one
    lake table's columns with their descriptions, and a clear error for an unknown name."""
    wide = {"COLUMNS": "400"}
    overview = runner.invoke(app, ["catalog"], env=wide)
    assert overview.exit_code == 0, overview.output
    assert "marts.revenue_daily" in overview.output
    assert "date_day x location_id x accommodation_type_id x currency_code" in overview.output
    mart = runner.invoke(app, ["catalog", "revenue_daily"], env=wide)
    assert mart.exit_code == 0, mart.output
    assert "Grain: one row per date_day x location_id" in mart.output
    line = next(x for x in mart.output.splitlines() if " adr_net " in x)
    assert "DECIMAL(18,2)" in line and "ADR excluding VAT = room_revenue_net / nights_sold" in line
    lake = runner.invoke(app, ["catalog", "lake.reservations"], env=wide)
    assert lake.exit_code == 0, lake.output
    status = next(x for x in lake.output.splitlines() if " status " in x)
    assert "-12 = CANCELLED" in status and "BIGINT" in status
    unknown = runner.invoke(app, ["catalog", "revenue_weekly"], env=wide)
    assert unknown.exit_code == 2
    assert "no model or lake table is called 'revenue_weekly'" in unknown.output


def test_the_live_display_says_what_a_run_waits_for() -> None:
    """While the lake's writer lock is busy the display names its holder, on one line; once the
    run has the lock it shows the tables again."""
    import io

    from rich.console import Console

    from assets import progress
    from pipelines.summary import ProgressDisplay

    console = Console(file=io.StringIO(), width=200, record=True)
    display = ProgressDisplay(console, enabled=True)
    display.on_page(progress.WaitEvent("pid 7, run abc, since 2026-11-25T12:00:00+00:00"))
    console.print(display.render())
    display.on_page(progress.WaitEvent(None))
    display.on_page(progress.PageEvent("reservations", 10))
    console.print(display.render())
    lines = console.export_text().splitlines()
    waiting = [x for x in lines if x.startswith("waiting for the lake's writer lock (")]
    assert waiting and all(
        x.endswith("held by pid 7, run abc, since 2026-11-25T12:00:00+00:00") for x in waiting
    )
    assert any(x.strip().startswith("extracting (") for x in lines)
    assert any("reservations" in x and "10" in x for x in lines)


SPY_RUN = """
import contextlib, json, sys
import pipelines.target as target
seen = []
real = target.service_target

@contextlib.contextmanager
def spy(*args, **kwargs):
    seen.append({"runner_imported": "pipelines.runner" in sys.modules, "wait": kwargs.get("wait")})
    with real(*args, **kwargs) as found:
        yield found

target.service_target = spy
from typer.testing import CliRunner
from pipelines.cli import app
result = CliRunner().invoke(app, ["run", "-q", "--scale", "no-such-scale"])
print(json.dumps({"seen": seen, "code": result.exit_code, "output": result.output}))
"""


def test_run_starts_the_sandbox_before_the_pipeline_imports_and_reports_its_failure(
    tmp_path: Path,
) -> None:
    """The embedded sandbox's world generates while Dagster and the code location are imported
    (a large world: ~30 CPU s on the other core); a sandbox that cannot start is still one line."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("RESERVOIR_")}
    env.update(RESERVOIR_DATA_DIR=str(tmp_path / "data"), COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-c", SPY_RUN], env=env, capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["seen"] == [{"runner_imported": False, "wait": False}]
    assert found["code"] == 1, found["output"]
    lines = [line for line in found["output"].splitlines() if line.strip()]
    assert len(lines) == 1 and "stopped while starting" in lines[0], found["output"]
    assert lines[0].endswith("nothing was written"), found["output"]
