"""`reservoir dashboard` writes the app's page as one offline file; `reservoir serve` starts the
app from the command line; a warehouse from before these marts gets a message, not a trace."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import httpx
import pytest
from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.dashboard import DashboardError, build_dashboard
from tests.ports import free_port
from tests.serve.conftest import Built
from tests.serve.test_app import default_range, expected_tiles, tiles

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.xdist_group("e2e")]


def test_the_snapshot_is_the_page_with_its_scripts_inlined(built: Built, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["dashboard", "--out", str(tmp_path / "d.html")],
        env={"RESERVOIR_DATA_DIR": str(built.data_dir), "COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    page = (tmp_path / "d.html").read_text()
    # nothing to fetch: no external script, stylesheet, image or frame; a CSP that forbids it
    assert re.search(r"<(script|link|img|iframe)[^>]+(src|href)=\"(?!data:)", page) is None
    assert "default-src 'none'" in page
    assert re.search(r"plotly\.js v\d+\.\d+\.\d+", page)  # the bundle the package ships, inline
    assert "<form" not in page  # no server behind the file: the filters are shown as text
    lo, hi = default_range(built.as_of)
    assert tiles(page) == expected_tiles(built, lo, hi, {})
    assert page.count("data-figure=") == 20


def test_a_warehouse_without_the_new_marts_says_to_rebuild(built: Built, tmp_path: Path) -> None:
    old = tmp_path / "old.duckdb"
    shutil.copy(built.warehouse, old)
    con = duckdb.connect(str(old))
    con.execute("drop table marts.sales_daily")
    con.close()
    with pytest.raises(DashboardError, match="reservoir run"):
        build_dashboard(old, tmp_path / "d.html")


def test_reservoir_serve_serves_the_page_and_the_feed(built: Built) -> None:
    port = free_port()
    env = {**os.environ, "RESERVOIR_DATA_DIR": str(built.data_dir)}
    reservoir = Path(sys.executable).with_name("reservoir")
    proc = subprocess.Popen(
        [str(reservoir), "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(base + "/healthz", timeout=5).text == "ok":
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        page = httpx.get(base + "/", timeout=60)
        assert page.status_code == 200 and "Revenue and occupancy" in page.text
        spec = httpx.get(base + "/api/metrics", timeout=60).json()
        assert "occupancy" in spec["metrics"]
        assert httpx.post(base + "/api/metrics", timeout=60).status_code == 405  # read-only
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    assert f"http://127.0.0.1:{port}/" in out
