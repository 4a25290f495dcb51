"""The probe's answer kept in the cache folder (`warehouse.probe`): the same answer as building
every model empty, read back by the next process, and never read once a model changed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from warehouse import probe
from warehouse.models import discover_models


def _fresh() -> probe.Schemas:
    """`model_schemas` as a new process runs it (the in-process memo left aside)."""
    return probe.model_schemas.__wrapped__()  # type: ignore[attr-defined]


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "reservoir"


def _no_probe(*_: object) -> probe.Schemas:
    raise AssertionError("the models were built again")


def test_the_next_process_reads_the_same_answer(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _fresh()
    assert [p.name for p in cache_home.iterdir()] == [
        f"{probe.CACHE_PREFIX}{probe.cache_key(probe._statements(discover_models()))}.json"
    ]
    assert built["marts.occupancy_daily"][:1] == (("date_day", "DATE"),)
    monkeypatch.setattr(probe, "_probe", _no_probe)
    assert _fresh() == built


def test_a_changed_model_is_probed_again(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _fresh()
    models = discover_models()
    q = "marts.occupancy_daily"
    changed = dict(models)
    changed[q] = dataclasses.replace(
        models[q], sql=f"select *, 1 as probe_extra from (\n{models[q].sql}\n)"
    )
    monkeypatch.setattr(probe, "discover_models", lambda: changed)
    after = _fresh()
    assert after[q] == (*before[q], ("probe_extra", "INTEGER"))
    assert len(list(cache_home.iterdir())) == 2  # the old answer stays under its own name


def test_a_cache_folder_that_cannot_be_written_costs_only_the_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert _fresh() == probe.model_schemas()


def test_a_damaged_file_is_probed_again(cache_home: Path) -> None:
    built = _fresh()
    (path,) = cache_home.iterdir()
    path.write_text('{"marts.occupancy_daily": [')
    assert _fresh() == built
