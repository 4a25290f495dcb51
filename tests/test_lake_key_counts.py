"""The lake asset's unique-keys counts taken while the run goes on (`pipelines.lake_key_counts`):
a table is counted in the background once its stream's landing has committed, a table landed
again is counted again, and the count used is the one after its last commit."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from assets import progress
from lake.parts import new_batch_id
from lake.store import Lake, connect
from lake.tables import TABLES
from pipelines.lake_key_counts import KeyCounts

T0 = datetime(2026, 1, 1, tzinfo=UTC)
B1, B2 = (new_batch_id(T0, f"{h:08x}") for h in (1, 2))


def _write(lake: Lake, table: str, batch: str, rows: list[dict]) -> None:
    lineage = {
        "_batch_id": batch,
        "_batch_kind": "full",
        "_extracted_at": T0,
        "_source": "/test",
        "_is_deleted": False,
        "_extra": None,
    }
    schema = TABLES[table].arrow_schema()
    writer = lake.writer(TABLES[table], batch)
    writer.add(pa.Table.from_pylist([{**lineage, **r} for r in rows], schema=schema))
    writer.commit()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(table, thread name) of every count."""
    seen: list[tuple[str, str]] = []
    real = Lake.duplicate_keys

    def spy(self: Lake, table: str, con: object = None) -> int:
        seen.append((table, threading.current_thread().name))
        return real(self, table, con)  # type: ignore[arg-type]

    monkeypatch.setattr(Lake, "duplicate_keys", spy)
    return seen


def test_a_stream_is_counted_in_the_background_once_it_commits(
    tmp_path: Path, counted: list[tuple[str, str]]
) -> None:
    lake = Lake(tmp_path / "lake")
    _write(lake, "companies", B1, [{"company_id": 1}, {"company_id": 1}, {"company_id": 2}])
    _write(lake, "distribution_channels", B1, [{"distribution_channel_id": 3}])
    checked = {"companies", "distribution_channels", "distribution_channel_commissions"}
    with KeyCounts(lake, checked) as counts:
        progress.report("companies", 5, 0)  # a page: nothing committed yet
        progress.report("companies", 0, 0, done=True)  # the stream's landing committed
        progress.report("units", 0, 0, done=True)  # not among the checked tables
        with connect() as con:
            assert counts.get("companies", con) == 1
            in_background = list(counted)
            # never committed in this run: counted when asked, here
            assert counts.get("distribution_channels", con) == 0
    assert in_background == [("companies", "lake-key-counts_0")]
    assert counted[1:] == [("distribution_channels", threading.current_thread().name)]


def test_a_stream_committed_again_is_counted_again_and_its_children_with_it(
    tmp_path: Path, counted: list[tuple[str, str]]
) -> None:
    lake = Lake(tmp_path / "lake")
    _write(lake, "distribution_channels", B1, [{"distribution_channel_id": 3}])
    checked = {"distribution_channels", "distribution_channel_commissions"}
    with KeyCounts(lake, checked) as counts:
        progress.report("distribution_channels", 0, 0, done=True)
        # a later landing of the same stream writes a key twice in its batch
        _write(lake, "distribution_channels", B2, [{"distribution_channel_id": 4}] * 2)
        progress.report("distribution_channels", 0, 0, done=True)
        with connect() as con:
            assert counts.get("distribution_channels", con) == 1  # after the last commit
            assert counts.get("distribution_channel_commissions", con) == 0
    assert sorted(counted) == sorted(
        [
            *[("distribution_channels", "lake-key-counts_0")] * 2,
            *[("distribution_channel_commissions", "lake-key-counts_0")] * 2,
        ]
    )


def test_commits_after_the_landings_are_not_counted_ahead(
    tmp_path: Path, counted: list[tuple[str, str]]
) -> None:
    """Once stopped (the run's landings are over), a done event of another run in this
    process starts no count; `get` counts the table itself."""
    lake = Lake(tmp_path / "lake")
    _write(lake, "companies", B1, [{"company_id": 1}])
    with KeyCounts(lake, {"companies"}) as counts:
        counts.stop()
        progress.report("companies", 0, 0, done=True)
        with connect() as con:
            assert counts.get("companies", con) == 0
    assert counted == [("companies", threading.current_thread().name)]
