"""The dashboard rendered by a real browser: it paints, and logs no console errors."""

from __future__ import annotations

import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from pipelines.dashboard import build_dashboard
from tests.dashboard.conftest import TODAY, make_warehouse

CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1400, 2000
CONSOLE_ERROR = re.compile(r"Uncaught|ERROR:CONSOLE|Refused to|Content[- ]Security[- ]Policy")

pytestmark = [
    pytest.mark.chromium,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"{CHROMIUM} is missing; run scripts/ensure-chromium.sh (as root) to install it",
    ),
]


def _screenshot(page: Path, png: Path, profile: Path) -> str:
    """Render `page` headless into `png`; returns chromium's stderr (console lines included)."""
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={WIDTH},{HEIGHT}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


def _png_facts(png: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values in the pixel stream) from the PNG's own chunks."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, bytearray(), 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, len(set(zlib.decompress(bytes(idat))))


@pytest.mark.parametrize("empty", [False, True], ids=["full", "empty-marts"])
def test_the_page_paints_without_console_errors(tmp_path: Path, empty: bool) -> None:
    warehouse = make_warehouse(tmp_path / "warehouse.duckdb", empty=empty)
    page = build_dashboard(warehouse, tmp_path / "dashboard.html", today=TODAY)
    png = tmp_path / "dashboard.png"
    stderr = _screenshot(page, png, tmp_path / "profile")
    errors = [line for line in stderr.splitlines() if CONSOLE_ERROR.search(line)]
    assert errors == []
    assert png.is_file()
    width, height, distinct = _png_facts(png)
    assert (width, height) == (WIDTH, HEIGHT)
    # a blank page compresses to a few kilobytes of nearly constant bytes
    assert png.stat().st_size > (40_000 if not empty else 15_000)
    assert distinct > 100
