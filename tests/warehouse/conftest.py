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


@pytest.fixture
def replaced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables whose affected keys' rows a refresh replaced (`replace_rows`, by key), in
    order, as the test's refreshes go."""
    import warehouse.maintain_keys

    tables: list[str] = []
    replace = warehouse.maintain_keys.replace_rows

    def recorded(con: duckdb.DuckDBPyConnection, table: str, *args: Any, **kwargs: Any) -> Any:
        tables.append(table)
        return replace(con, table, *args, **kwargs)

    monkeypatch.setattr(warehouse.maintain_keys, "replace_rows", recorded)
    return tables


@pytest.fixture(scope="session")
def first_state(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """`tests.warehouse.test_inplace._first_state`'s lake and warehouse, built once per worker
    (a build is ~1.2 CPU s) for the in-place tests, which copy it into their data dirs
    (`_first_state_copy`) and never change it; with the lake's batch count."""
    from tests.warehouse.test_inplace import _first_state

    data_dir = tmp_path_factory.mktemp("first-state")
    lake = Lake(data_dir)
    _first_state(lake, data_dir)
    return data_dir, lake._batches
