"""The sandbox process generates its world with the cyclic collector off, then freezes it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

import sandbox.runner
from sandbox.process import generated_world
from sandbox.settings import SandboxSettings


@pytest.fixture
def gc_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def test_generation_runs_without_the_collector_and_the_world_is_frozen(
    monkeypatch: pytest.MonkeyPatch, gc_restored: None
) -> None:
    seen: list[bool] = []
    made = {"records": [[] for _ in range(100)]}

    def world(settings: SandboxSettings) -> object:
        seen.append(gc.isenabled())
        return made

    monkeypatch.setattr(sandbox.runner, "default_world", world)
    gc.unfreeze()
    assert generated_world(SandboxSettings()) is made
    assert seen == [False]  # generation ran with the collector off
    assert gc.isenabled()  # and serving runs with it on
    assert gc.get_freeze_count() > 0
    # the world's objects are in the permanent generation, not in any the collector walks
    tracked = {id(obj) for generation in range(3) for obj in gc.get_objects(generation)}
    assert id(made) not in tracked
    assert id(made["records"][0]) not in tracked


def test_a_failed_generation_leaves_the_collector_on(
    monkeypatch: pytest.MonkeyPatch, gc_restored: None
) -> None:
    def world(settings: SandboxSettings) -> object:
        raise RuntimeError("no world")

    monkeypatch.setattr(sandbox.runner, "default_world", world)
    with pytest.raises(RuntimeError, match="no world"):
        generated_world(SandboxSettings())
    assert gc.isenabled()
