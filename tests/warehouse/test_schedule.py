"""The full build's models on a few cursors at once, in dependency order (warehouse.schedule)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
import pytest

from tests.warehouse.scenarios import Batch
from warehouse import schedule
from warehouse.build import build_warehouse
from warehouse.models import Model, discover_models


def _model(name: str, *deps: str) -> Model:
    return Model(
        layer="core",
        name=name,
        path=Path(f"{name}.sql"),
        sql="select 1",
        description="",
        deps=frozenset(f"core.{d}" for d in deps),
        lake_tables=frozenset(),
    )


def _graph(*models: Model) -> dict[str, Model]:
    return {m.qualified: m for m in models}


def _no_setup(cursor: duckdb.DuckDBPyConnection) -> None:
    pass


def test_a_model_starts_only_after_what_it_reads_and_two_run_at_once() -> None:
    # a -> c, b -> c, d alone: a and b (and d) are independent; a and b must overlap, since
    # each waits at a barrier for the other (a sequential build would break the barrier)
    models = _graph(_model("a"), _model("b"), _model("c", "a", "b"), _model("d"))
    barrier = threading.Barrier(2, timeout=10)
    spans: dict[str, tuple[float, float]] = {}
    lock = threading.Lock()

    def build(cursor: duckdb.DuckDBPyConnection, model: Model) -> float:
        start = time.perf_counter()
        if model.name in {"a", "b"}:
            barrier.wait()
        cursor.execute("select 1").fetchall()
        with lock:
            spans[model.name] = (start, time.perf_counter())
        return 0.5

    con = duckdb.connect()
    try:
        seconds = schedule.build_models(con, models, set(models), build, _no_setup, workers=2)
    finally:
        con.close()
    assert list(seconds) == list(models)  # in the models' (dependency) order
    assert spans["c"][0] >= max(spans["a"][1], spans["b"][1])
    assert seconds == dict.fromkeys(models, 0.5)


def test_models_outside_the_selection_are_not_waited_for() -> None:
    models = _graph(_model("a"), _model("b", "a"))
    built: list[str] = []

    def build(cursor: duckdb.DuckDBPyConnection, model: Model) -> float:
        built.append(model.name)
        return 0.0

    con = duckdb.connect()
    try:
        schedule.build_models(con, models, {"core.b"}, build, _no_setup)
    finally:
        con.close()
    assert built == ["b"]


def test_each_cursor_gets_its_setup_before_a_model() -> None:
    models = _graph(_model("a"), _model("b"), _model("c"))

    def setup(cursor: duckdb.DuckDBPyConnection) -> None:
        cursor.execute("create or replace temp macro twice(x) as 2 * x")

    def build(cursor: duckdb.DuckDBPyConnection, model: Model) -> float:
        (value,) = cursor.execute("select twice(21)").fetchone() or (None,)
        assert value == 42
        return 0.0

    con = duckdb.connect()
    try:
        assert len(schedule.build_models(con, models, set(models), build, setup)) == 3
    finally:
        con.close()


def test_a_failure_interrupts_the_running_model_and_builds_nothing_after() -> None:
    # a fails once b's long statement runs; b must be interrupted (not run to its end), and
    # c, which reads a, never starts
    models = _graph(_model("a"), _model("b"), _model("c", "a"))
    started = threading.Event()
    outcome: list[str] = []

    def build(cursor: duckdb.DuckDBPyConnection, model: Model) -> float:
        if model.name == "a":
            assert started.wait(10)
            time.sleep(0.2)  # b's statement is running
            raise RuntimeError("model a failed")
        if model.name == "b":
            started.set()
            try:
                cursor.execute("select count(*) from range(3000000000) t(i) where i % 7 = 3")
            except duckdb.InterruptException:
                outcome.append("interrupted")
                raise
            outcome.append("finished")
        outcome.append(model.name)
        return 0.0

    con = duckdb.connect()
    try:
        with pytest.raises(RuntimeError, match="model a failed"):
            schedule.build_models(con, models, set(models), build, _no_setup, workers=2)
    finally:
        con.close()
    assert outcome == ["interrupted"]


def test_the_long_chains_start_first() -> None:
    models = discover_models()
    rank = schedule.ready_order(models, set(models))
    # the reservations' staging feeds most of the build: ahead of a reference list that only
    # a few models read
    assert rank["staging.stg_reservations"] < rank["staging.stg_units"]
    assert rank["core.fct_bill_lines"] < rank["core.fct_journal_entries"]
    assert sorted(rank.values()) == list(range(len(models)))


def test_a_build_on_two_cursors_equals_one_on_one(lake, tmp_path: Path, monkeypatch) -> None:
    (
        Batch()
        .reference(units=3)
        .reservation(1, "2025-01-01", "2025-01-04")
        .reservation(2, "2025-01-02", "2025-01-06")
        .flush(lake, kind="full")
    )
    one = tmp_path / "one.duckdb"
    monkeypatch.setattr(schedule, "WORKERS", 1)
    build_warehouse(tmp_path).path.rename(one)
    monkeypatch.setattr(schedule, "WORKERS", 2)
    two = build_warehouse(tmp_path).path
    con = duckdb.connect(str(two), read_only=True)
    try:
        con.execute(f"attach '{one}' as one (read_only)")
        tables = con.execute(
            "select schema_name, table_name from duckdb_tables() "
            "where database_name = current_database() and schema_name in "
            "('staging', 'core', 'marts')"
        ).fetchall()
        assert len(tables) > 50
        for schema, table in tables:
            a, b = f"{schema}.{table}", f"one.{schema}.{table}"
            diff = con.execute(
                f"select count(*) from ((from {a} except all from {b}) "
                f"union all (from {b} except all from {a}))"
            ).fetchone()
            assert diff == (0,), a
    finally:
        con.close()
