"""One as-of clock: a sandbox served over HTTP, configured like an external service (the
pipeline knows nothing of its world), whose clock is not this machine's. After a bootstrap, a
`reservoir sandbox advance` and an incremental run, the run summary, `reservoir status`, the
dashboard header, the headline KPIs, the warehouse's meta and the lake's run state all show the
same as-of date: the service's."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from rich.console import Console
from typer.testing import CliRunner

from lake.state import read_as_of, read_cursor
from lake.store import Lake
from pipelines.cli import app
from pipelines.dashboard import build_dashboard
from pipelines.runner import ServiceTarget, run_pipeline
from pipelines.settings import Settings
from pipelines.status import print_status
from pipelines.summary import RunSummary
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("as_of_clock")]


@pytest.fixture
def home() -> Iterator[None]:
    saved = os.environ.get("DAGSTER_HOME")
    yield
    if saved is None:
        os.environ.pop("DAGSTER_HOME", None)
    else:
        os.environ["DAGSTER_HOME"] = saved


def _external(handle: SandboxHandle) -> ServiceTarget:
    """The served sandbox as a configured service URL: no date and no world handed over."""
    return ServiceTarget(handle.base_url, handle.client_id, handle.client_secret, handle.scope)


def _advance(handle: SandboxHandle, hours: int) -> None:
    result = CliRunner().invoke(
        app, ["sandbox", "advance", "--hours", str(hours), "--url", handle.admin_url]
    )
    assert result.exit_code == 0, result.output


def _run(settings: Settings, handle: SandboxHandle) -> RunSummary:
    return run_pipeline(
        settings,
        mode="auto",
        quiet=True,
        console=Console(file=io.StringIO()),
        target=_external(handle),
    )


def test_summary_status_dashboard_and_meta_show_the_services_date(
    tmp_path: Path, home: None
) -> None:
    settings = Settings(data_dir=tmp_path)
    with run_sandbox(SandboxSettings(seed=5, scale="small")) as handle:
        wall = datetime.now(UTC).date()
        if handle.world.now.date() in (wall, wall - timedelta(days=1)):
            _advance(handle, 72)  # keep the service's date apart from this machine's
        first = _run(settings, handle)
        assert first.mode == "bootstrap"
        _advance(handle, 24)
        second = _run(settings, handle)
        assert second.mode == "incremental"
        service_date = handle.world.now.date()
    assert service_date != wall
    day = service_date.isoformat()

    lake = Lake(settings.lake_dir)
    recorded = read_as_of(lake)
    assert recorded is not None and recorded.business_date == service_date
    assert recorded.source == "the service's Date header"
    cursor = read_cursor(lake)
    assert cursor is not None and cursor.business_date == service_date

    con = duckdb.connect(str(settings.warehouse_path), read_only=True)
    try:
        meta = con.execute("select as_of, as_of_source from meta.build_settings").fetchone()
        pace = con.execute("select max(as_of_date) from marts.booking_pace").fetchone()
    finally:
        con.close()
    assert meta == (service_date, "the service's Date header")
    assert pace == (service_date,)

    assert second.as_of is not None and second.as_of.startswith(f"{day} (the service's Date")
    assert f"occupancy, last 30 nights to {day}" in [name for name, _ in second.kpis]

    out = io.StringIO()
    print_status(settings, Console(file=out, width=200))
    assert f"as of: {day} (the service's Date header" in out.getvalue()

    page = build_dashboard(settings.warehouse_path, tmp_path / "dashboard.html").read_text()
    assert f'As of <time datetime="{day}">' in page
    assert f"<title>Reservoir dashboard · {day}</title>" in page
