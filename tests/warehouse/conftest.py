from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.warehouse.lakefixture import Lake


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path)


@pytest.fixture
def query(tmp_path: Path) -> Callable[..., list[tuple[Any, ...]]]:
    """Run a read-only query on the published warehouse of the test's data dir."""

    def run(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        con = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)
        try:
            return con.execute(sql, params or []).fetchall()
        finally:
            con.close()

    return run
