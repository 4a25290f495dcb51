"""Every `reservoir run` path materialises the assets and evaluates their checks.

Auto mode twice (the bootstrap, then the event feed) against the embedded sandbox: each run
records an evaluation of every check of every lake and warehouse asset in the Dagster instance,
the summary lists them, and they all pass on a sandbox world. The bootstrap is the README's
`reservoir run` (the session's `readme_run`, tests/pipeline_runs.py: seed 7, small, the sandbox
in a child process), whose data directory this test copies and goes on from: its instance holds
the bootstrap's check evaluations. The data directory then refuses another source. Then a
check is broken on purpose (a duplicated lake file): the next run reports it by name and fails;
`reservoir run`'s exit code on a failed check is asserted by tests/sandbox/test_process.py on
the README's first command. A run with `--select` goes on from the same bootstrap.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from rich.console import Console

from pipelines.definitions import defs
from pipelines.instance import prepare_instance
from pipelines.run_requests import REQUESTS_TAG, requests_in
from pipelines.runner import RunError, ServiceTarget, run_pipeline
from pipelines.settings import Settings
from pipelines.status import print_status
from pipelines.summary import RunSummary
from sandbox.runner import SandboxSettings, run_sandbox
from tests.sandbox.test_process import ReadmeRun

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def _every_check() -> set[tuple[str, str]]:
    repo = defs.get_repository_def()
    return {
        (key.asset_key.to_user_string(), key.name)
        for assets_def in repo.asset_graph.assets_defs
        for key in assets_def.check_keys
    }


@pytest.fixture
def home() -> Iterator[None]:
    saved = os.environ.get("DAGSTER_HOME")
    yield
    if saved is None:
        os.environ.pop("DAGSTER_HOME", None)
    else:
        os.environ["DAGSTER_HOME"] = saved


def _run(settings: Settings, handle: object) -> RunSummary:
    return run_pipeline(
        settings,
        mode="auto",
        quiet=True,
        console=Console(file=open(os.devnull, "w")),
        target=ServiceTarget.from_sandbox(handle),
    )


@pytest.mark.xdist_group("readme_run")  # with the test that asserts the command itself
def test_auto_runs_evaluate_every_check_and_a_broken_one_fails_the_run(
    tmp_path: Path, home: None, readme_run: ReadmeRun
) -> None:
    settings = Settings(data_dir=tmp_path)
    expected = _every_check()
    assert len(expected) >= 40  # lake unique keys and quarantine rates, warehouse checks
    # the bootstrap: `reservoir run` on an empty data directory, its sandbox world in a child
    assert readme_run.code == 0, readme_run.err[-2000:]
    assert "reservoir bootstrap run" in readme_run.out
    shutil.copytree(readme_run.data_dir, tmp_path, dirs_exist_ok=True)
    instance = prepare_instance(settings)
    (first,) = instance.get_run_records()
    keys = [dg.AssetCheckKey(dg.AssetKey.from_user_string(a), n) for a, n in expected]
    records = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    assert set(records) == set(keys)  # every check evaluated, by the bootstrap
    assert {r.run_id for r in records.values()} == {first.dagster_run.run_id}
    # evaluated (not only planned) and passed: a warning or an error is FAILED
    status = {key: record.status.value for key, record in records.items()}
    assert status == dict.fromkeys(keys, "SUCCEEDED")
    # the same world in this process (a world is its seed): the feed goes on from the bootstrap
    with run_sandbox(SandboxSettings(seed=7, scale="small")) as handle:
        handle.world.advance(hours=24)  # new bookings, changes and cancellations: events
        second = _run(settings, handle)
        assert second.mode == "incremental"
        assert second.tables["reservations"].rows > 0
        assert {(c.asset, c.name) for c in second.checks} == expected
        assert {c.outcome for c in second.checks} == {"passed"}

        instance = dg.DagsterInstance.get()
        for asset, name in expected:
            key = dg.AssetCheckKey(dg.AssetKey.from_user_string(asset), name)
            record = instance.event_log_storage.get_latest_asset_check_execution_by_key([key])
            assert record[key].run_id == second.run_id, (asset, name)

        _assert_another_source_is_refused(settings)

        # Break one check on purpose: a second copy of a committed file duplicates every key
        # of its batch in the current state.
        folder = settings.lake_dir / "companies"
        original = sorted(folder.glob("*.parquet"))[-1]
        shutil.copy(original, original.with_name(original.name.replace("-00000", "-00001")))
        with pytest.raises(RunError, match=r"check\(s\) failed: lake/companies unique_keys"):
            _run(settings, handle)

    # `reservoir status` shows the latest outcome of every check, the failing one by name.
    out = io.StringIO()
    print_status(settings, Console(file=out, width=200))
    text = out.getvalue()
    assert f"checks (latest evaluation): {len(expected) - 1} passed, 0 warned, 1 failed" in text
    assert "lake/companies" in text and "unique_keys" in text and "failed" in text
    # the day's requests, from each run's tag: what its lake materializations report (a run
    # refused before its lake step, e.g. by the source check, has neither)
    instance = prepare_instance(settings)
    used, tagged = 0, 0
    for record in instance.get_run_records():
        run = record.dagster_run
        lake = [
            {k: getattr(v, "value", v) for k, v in e.asset_materialization.metadata.items()}
            for e in instance.all_logs(
                run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
            )
            if e.asset_materialization and e.asset_materialization.asset_key.path[0] == "lake"
        ]
        tagged += REQUESTS_TAG in run.tags
        assert int(run.tags.get(REQUESTS_TAG, 0)) == requests_in(lake), run.run_id
        used += requests_in(lake)
    assert tagged >= 3 and used > 0  # the bootstrap, the feed and the broken run
    assert f"requests today: {used:,} of" in text


@pytest.mark.xdist_group("readme_run")
def test_a_selected_run_lands_and_checks_only_what_it_names(
    tmp_path: Path, home: None, readme_run: ReadmeRun
) -> None:
    """`reservoir run --select`: a full read of what it names, nothing else landed or built, and
    only their checks evaluated; an unknown name, or a selection with the incremental mode, is
    refused with what to do."""
    settings = Settings(data_dir=tmp_path)
    assert readme_run.code == 0, readme_run.err[-2000:]
    shutil.copytree(readme_run.data_dir, tmp_path, dirs_exist_ok=True)
    with run_sandbox(SandboxSettings(seed=7, scale="small")) as handle:

        def run(select: list[str], mode: str = "auto") -> RunSummary:
            return run_pipeline(
                settings,
                mode=mode,
                select=select,
                quiet=True,
                console=Console(file=open(os.devnull, "w")),
                target=ServiceTarget.from_sandbox(handle),
            )

        with pytest.raises(
            RunError,
            match=r"--select 'reservation' matches no table or model; "
            r"known: .*\breservations\b",
        ):
            run(["reservation"])
        with pytest.raises(RunError, match="--select works with full runs only"):
            run(["companies"], mode="incremental")
        summary = run(["companies"])  # a full read of the selection
    assert set(summary.tables) == {"companies"}
    assert summary.models == {}  # no warehouse model was selected: none is built
    checked = {asset for asset, _ in _every_check() if asset == "lake/companies"}
    assert checked and {c.asset for c in summary.checks} == checked
    assert {c.outcome for c in summary.checks} == {"passed"}


@pytest.mark.parametrize(
    ("seed", "scale"),
    [
        # In the default suite the checks of other worlds are asserted where those worlds are
        # built anyway: seed 3 (full) by test_supply_second_seed.py on the shared seed-3 build,
        # seed 11 (bootstrap and two incremental runs) by test_supply_truth.py. Here with a day's
        # incremental run as well, and a medium world (minutes on 2 cores): `make chaos`.
        pytest.param(3, "small", id="seed3-small", marks=pytest.mark.chaos),
        pytest.param(11, "small", id="seed11-small", marks=pytest.mark.chaos),
        pytest.param(
            5, "medium", id="seed5-medium", marks=[pytest.mark.chaos, pytest.mark.timeout(1800)]
        ),
    ],
)
def test_every_check_passes_on_other_worlds(
    tmp_path: Path, home: None, seed: int, scale: str
) -> None:
    """The data checks hold on sandbox worlds other than the default one, after the bootstrap
    and after an incremental run a day later."""
    settings = Settings(data_dir=tmp_path)
    with run_sandbox(SandboxSettings(seed=seed, scale=scale)) as handle:
        first = _run(settings, handle)
        handle.world.advance(hours=24)
        second = _run(settings, handle)
    for summary in (first, second):
        failing = [(c.asset, c.name, c.outcome) for c in summary.checks if c.outcome != "passed"]
        assert failing == [], (seed, summary.mode)


def _assert_another_source_is_refused(settings: Settings) -> None:
    """Pointing a data directory built from one source (the seed-7 sandbox) at another (here:
    another sandbox world) exits with a message saying what to do, and lands nothing. (In the
    auto-runs test: the directory it needs is built there anyway.)"""
    lake = settings.lake_dir
    before = sorted(str(p.relative_to(lake)) for p in lake.rglob("*.parquet"))
    with (
        run_sandbox(SandboxSettings(seed=11, scale="small")) as other,
        pytest.raises(RunError, match=r"holds data from the embedded sandbox \(seed 7") as info,
    ):
        _run(settings, other)
    assert "RESERVOIR_DATA_DIR" in str(info.value)
    assert sorted(str(p.relative_to(lake)) for p in lake.rglob("*.parquet")) == before
