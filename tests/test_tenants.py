"""Tenants (RESERVOIR_TENANTS_FILE): concerns from one tenants file, sandboxes with different
seeds (one serving faults), into one S3-compatible lake (moto) and one Dagster instance on
PostgreSQL; each tenant's marts equal its sandbox's ground truth, the group warehouse's marts
equal the sum of the tenants', and a tenant whose credentials are wrong fails alone with its
message while the others land. The default suite lands two good tenants (the smallest set in
which a group sum adds anything) and the failing one; `make chaos` lands three good ones. Then
the tenants file's errors, each naming the file, the tenant and what to do."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pandas as pd
import pytest
from rich.console import Console

from lake.remote import DeltaRemote
from pipelines.resources import DEFAULT_HORIZON_DAYS
from pipelines.runner import ServiceTarget
from pipelines.settings import Settings
from pipelines.tenant_runs import TenantsRun, run_tenants
from pipelines.tenants import (
    TENANT_TAG,
    TenantsError,
    load_tenants,
    select_tenants,
    tenant_settings,
)
from sandbox.runner import SandboxSettings, run_sandbox
from sandbox.world.truth_marts import mart_truth
from tests.e2e.test_mart_truth import mismatches
from tests.postgres_server import postgres_cluster
from tests.s3_server import ACCESS_KEY, REGION, SECRET_KEY, make_bucket, s3_server
from tests.truth import read_mart
from warehouse.group import group_columns, group_docs

BUCKET = "tenants"
FAULTS = {"http_503": 0.05, "drop": 0.05, "truncate": 0.05}
# name -> (seed, faults) of the good tenants' sandboxes: `coast` is served faults.
GOOD = {"north": (7, {}), "south": (11, {}), "coast": (23, FAULTS)}
# A real service (north's sandbox) and its client, with a secret that is not its own.
WRONG_TOML = """\
[[tenant]]
name = "wrong"
base_url = "{base_url}"
client_id = "{client_id}"
client_secret_env = "WRONG_TENANT_SECRET"
scope = "{scope}"
"""
TRUTH_MARTS = ("revenue_daily", "channel_mix_monthly")
# The landing is built once per tenant set (module fixture): its tests stay on one xdist worker.
pytestmark = pytest.mark.xdist_group("tenants")
# Each tenant's landing is a whole run (most of it Dagster's and the warehouse's fixed cost, not
# the world's size): `make chaos` lands two good tenants and three. The default suite keeps
# `reservoir run` with a tenants file of a good and a wrong tenant (the last test here) and
# tests/test_tenant_partitions.py; the two landings cost ~70 s of CI's budget of about eight
# minutes (docs/benchmarks.md, "Session 15: the test suite under eight minutes").
TENANT_SETS = [
    pytest.param(("north", "coast"), id="two", marks=pytest.mark.chaos),
    pytest.param(("north", "south", "coast"), id="three", marks=pytest.mark.chaos),
]


@dataclass
class Landed:
    run: TenantsRun
    base: Settings
    handles: dict[str, Any]
    lake_url: str
    pg_url: str

    @property
    def good(self) -> tuple[str, ...]:
        return tuple(self.handles)


def _toml(name: str) -> str:
    seed, faults = GOOD[name]
    text = f'[[tenant]]\nname = "{name}"\nsandbox_seed = {seed}\n'
    if faults:
        rates = ", ".join(f"{k} = {v}" for k, v in faults.items())
        text += f"sandbox_faults = {{ {rates} }}\n"
    return text + "\n"


@pytest.fixture(scope="module", params=TENANT_SETS)
def landed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Landed]:
    good: tuple[str, ...] = request.param
    tmp = tmp_path_factory.mktemp("tenants")
    saved = {k: os.environ.get(k) for k in _ENV_TOUCHED}
    with ExitStack() as stack:
        endpoint = stack.enter_context(s3_server())
        pg_url = stack.enter_context(postgres_cluster())
        handles = {
            name: stack.enter_context(
                run_sandbox(
                    SandboxSettings(seed=GOOD[name][0], scale="small", faults=GOOD[name][1])
                )
            )
            for name in good
        }
        make_bucket(endpoint, BUCKET)
        os.environ.update(
            {
                "AWS_ENDPOINT_URL": endpoint,
                "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                "AWS_REGION": REGION,
                "WRONG_TENANT_SECRET": "not-the-secret",
            }
        )
        try:
            path = tmp / "tenants.toml"
            north = handles["north"]
            path.write_text(
                "".join(_toml(n) for n in good)
                + WRONG_TOML.format(base_url=north.base_url, client_id=north.client_id, scope="SBX")
            )
            tenants = load_tenants(path)
            lake_url = f"s3://{BUCKET}/group"
            base = Settings(data_dir=tmp / "data", lake_url=lake_url, dagster_pg_url=pg_url)
            # The test holds the tenants' sandboxes (their worlds are the truth); the file's
            # seeds and faults are the ones they were started with.
            for t in tenants:
                if t.name in handles:
                    world = handles[t.name].settings
                    assert (t.sandbox_seed, t.sandbox_faults) == (world.seed, world.faults)
            run = run_tenants(
                base,
                tenants,
                mode="full",
                quiet=True,
                console=Console(file=open(os.devnull, "w")),  # noqa: SIM115
                targets={n: ServiceTarget.from_sandbox(h) for n, h in handles.items()},
            )
            yield Landed(run, base, handles, lake_url, pg_url)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


_ENV_TOUCHED = (
    "AWS_ENDPOINT_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_REGION",
    "WRONG_TENANT_SECRET",
    "DAGSTER_HOME",
    "RESERVOIR_DAGSTER_PG_URL",
)


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_wrong_credentials_fail_alone_with_their_message(landed: Landed) -> None:
    outcomes = {o.tenant: o for o in landed.run.outcomes}
    assert [o.tenant for o in landed.run.failed] == ["wrong"]
    message = outcomes["wrong"].error or ""
    assert "credential" in message.lower() or "401" in message, message
    assert "not-the-secret" not in message
    assert all(outcomes[n].ok for n in landed.good)
    assert not (landed.base.data_dir / "tenant=wrong" / "warehouse.duckdb").exists()
    # The faults were served to `coast` and retried through.
    injected = landed.handles["coast"].stats()["faults"]["injected"]
    assert sum(injected.values()) > 0, injected


def _truth(handle: Any, warehouse: Path) -> dict[str, pd.DataFrame]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        row = con.execute("select as_of, tenant from meta.build_settings").fetchone()
    assert row is not None
    assert row[1] == warehouse.parent.name.removeprefix("tenant=")  # the file says whose it is
    world = handle.world
    return mart_truth(
        world,
        as_of=row[0],
        availability_start=world.now.date(),
        availability_days=DEFAULT_HORIZON_DAYS,
    )


@pytest.mark.sandbox
@pytest.mark.slow
def test_each_tenants_marts_equal_its_sandboxs_truth(landed: Landed) -> None:
    for tenant in landed.good:
        _assert_marts_equal_truth(landed, tenant)


def _assert_marts_equal_truth(landed: Landed, tenant: str) -> None:
    warehouse = landed.base.data_dir / f"tenant={tenant}" / "warehouse.duckdb"
    truth = _truth(landed.handles[tenant], warehouse)
    for name in TRUTH_MARTS:
        bad = mismatches(name, truth[name], read_mart(warehouse, name))
        assert not bad, f"{tenant} {name}: " + "\n".join(bad[:10])
    nights = landed.handles[tenant].world.ground_truth()["nights"]
    occupancy = read_mart(warehouse, "occupancy_daily")
    window = occupancy[
        occupancy["date_day"].between(
            date.fromisoformat(str(nights["date"].min())[:10]),
            date.fromisoformat(str(nights["date"].max())[:10]),
        )
    ]
    assert int(window["nights_sold"].sum()) == int(nights["nights_sold"].sum()) > 500


@pytest.mark.sandbox
@pytest.mark.slow
def test_every_lake_row_carries_its_tenant_on_the_store_and_in_the_cache(landed: Landed) -> None:
    data = landed.base.data_dir
    pattern = str(data / "tenant=*" / "lake" / "reservations" / "*.parquet")
    with duckdb.connect() as con:
        counts = dict(
            con.execute(
                "select tenant, count(*) from read_parquet($p, hive_partitioning = true) "
                "group by tenant",
                {"p": pattern},
            ).fetchall()
        )
    assert set(counts) == set(landed.good)
    outcomes = {o.tenant: o for o in landed.run.outcomes}
    for name, rows in counts.items():
        summary = outcomes[name].summary
        assert summary is not None and rows == summary.tables["reservations"].rows > 0
        remote = DeltaRemote(f"{landed.lake_url}/tenant={name}")
        assert "reservations" in set(remote.tables())
    # Each tenant's runs are in the one PostgreSQL-backed instance under its tag.
    os.environ["RESERVOIR_DAGSTER_PG_URL"] = landed.pg_url
    os.environ["DAGSTER_HOME"] = str(landed.base.dagster_home.resolve())
    instance = dg.DagsterInstance.get()
    assert "postgres" in type(instance.run_storage).__name__.lower()
    for name in landed.good:
        runs = instance.get_run_records(filters=dg.RunsFilter(tags={TENANT_TAG: name}))
        assert len(runs) == 1 and runs[0].dagster_run.is_success, name
    assert not instance.get_run_records(filters=dg.RunsFilter(tags={TENANT_TAG: "wrong"}))


def _sum_of_tenants(landed: Landed, sql: str) -> pd.DataFrame:
    frames = []
    for name in landed.good:
        path = landed.base.data_dir / f"tenant={name}" / "warehouse.duckdb"
        with duckdb.connect(str(path), read_only=True) as con:
            frames.append(_frame(con, sql))
    return pd.concat(frames)


def _frame(con: duckdb.DuckDBPyConnection, sql: str) -> pd.DataFrame:
    """A query's rows as Python values: DECIMAL stays Decimal (exact sums)."""
    rel = con.execute(sql)
    return pd.DataFrame.from_records(rel.fetchall(), columns=[d[0] for d in rel.description or ()])


def _group(landed: Landed, sql: str) -> pd.DataFrame:
    assert landed.run.group is not None, landed.run.group_error
    with duckdb.connect(str(landed.run.group.path), read_only=True) as con:
        return _frame(con, sql)


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_group_marts_equal_the_sum_of_the_tenants(landed: Landed) -> None:
    assert landed.run.group is not None and set(landed.run.group.tenants) == set(landed.good)
    parts = _sum_of_tenants(
        landed,
        "select date_day, sum(nights_available) as a, sum(nights_sold) as s "
        "from marts.occupancy_daily group by date_day",
    )
    expected = parts.groupby("date_day")[["a", "s"]].sum().sort_index()
    got = _group(
        landed,
        "select date_day, nights_available as a, nights_sold as s "
        "from marts.group_occupancy_daily order by date_day",
    ).set_index("date_day")
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)

    money = "room_revenue_net, total_revenue_gross, commission_net, nights_sold"
    parts = _sum_of_tenants(
        landed,
        f"select date_day, currency_code, {', '.join(f'sum({c}) as {c}' for c in money.split(', '))} "
        "from marts.revenue_daily group by all",
    )
    expected = parts.groupby(["date_day", "currency_code"])[money.split(", ")].sum().sort_index()
    got = _group(
        landed, f"select date_day, currency_code, {money} from marts.group_revenue_daily"
    ).set_index(["date_day", "currency_code"])
    got = got.sort_index()
    for column in money.split(", "):  # Decimal sums, compared exactly
        assert [str(v) for v in got[column]] == [str(v) for v in expected[column]], column
    assert len(set(got.index.get_level_values("currency_code"))) >= 2  # never summed across

    parts = _sum_of_tenants(
        landed,
        "select month_start, distribution_channel_code as code, currency_code, "
        "sum(nights_sold) as n, sum(room_revenue_net) as r from marts.channel_mix_monthly "
        "group by all",
    )
    keys = ["month_start", "code", "currency_code"]
    expected = parts.groupby(keys, dropna=False)[["n", "r"]].sum().reset_index()
    got = _group(
        landed,
        "select month_start, distribution_channel_code as code, currency_code, "
        "nights_sold as n, room_revenue_net as r from marts.group_channel_mix_monthly",
    )
    joined = expected.merge(got, on=keys, how="outer", suffixes=("", "_group"))
    assert len(joined) == len(got) == len(expected) > 0
    assert (joined["n"] == joined["n_group"]).all()
    assert [str(v) for v in joined["r"]] == [str(v) for v in joined["r_group"]]

    # Every row of the stacked tenant marts carries its tenant; every column is described.
    tenants = _group(landed, "select distinct tenant from tenants.revenue_daily")
    assert set(tenants["tenant"]) == set(landed.good)
    # a mart stored as a view is stacked too, with every tenant's rows
    stacked = _group(
        landed, "select tenant, count(*) as n from tenants.allotment_pickup group by 1"
    )
    each = _sum_of_tenants(landed, "select count(*) as n from marts.allotment_pickup")
    assert int(stacked["n"].sum()) == int(each["n"].sum()) > 0
    with duckdb.connect(str(landed.run.group.path), read_only=True) as con:
        docs = group_docs(group_columns(con))
    undescribed = [f"{t}.{c}" for t, cols in docs.items() for c, text in cols.items() if not text]
    assert not undescribed, undescribed


# --- the tenants file's errors ---------------------------------------------------------------


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tenants.toml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        pytest.param(
            '[[tenant]]\nname = "a"\n[[tenant]]\nname = "a"\n',
            {},
            r"tenants\.toml.*the name 'a' is used twice; give each tenant its own name",
            id="duplicate",
        ),
        pytest.param(
            '[[tenant]]\nname = "North Park"\n',
            {},
            r"tenant #1: name 'North Park' is not a short identifier; use 1-32 characters",
            id="unsafe-name",
        ),
        pytest.param(
            '[[tenant]]\nname = "north"\nbase_url = "https://x.example/v2"\n'
            'client_id = "c"\nclient_secret_env = "NORTH_SECRET"\nscope = "NTH"\n',
            {},
            r"tenant 'north': the environment variable NORTH_SECRET \(client_secret_env\) is "
            r"not set; set it to the tenant's client secret",
            id="secret-variable-unset",
        ),
        pytest.param(
            '[[tenant]]\nname = "north"\nbase_url = "https://x.example/v2"\n',
            {},
            r"tenant 'north': base_url is set but client_id, client_secret_env, scope is not",
            id="credentials-missing",
        ),
        pytest.param(
            '[[tenant]]\nname = "north"\nclient_secret = "s3cr3t"\n',
            {},
            r"tenant 'north': unknown setting\(s\) client_secret; known:",
            id="a-secret-in-the-file",
        ),
        pytest.param(
            '[tenants]\nname = "a"\n', {}, r"must list its concerns as \[\[tenant\]\]", id="shape"
        ),
        pytest.param("[[tenant]\n", {}, r"is not valid TOML", id="toml"),
        pytest.param(
            '[[tenant]]\nname = "a"\nmax_concurrency = 20\n',
            {},
            r"tenant 'a': max_concurrency must be at most 15",
            id="cap",
        ),
        pytest.param(
            '[[tenant]]\nname = "default"\n',
            {},
            r"the name 'default' is the Dagster partition of the single tenant",
            id="default",
        ),
    ],
)
def test_a_wrong_tenants_file_says_which_file_tenant_and_what_to_do(
    tmp_path: Path, text: str, env: dict[str, str], expected: str
) -> None:
    with pytest.raises(TenantsError, match=expected) as caught:
        load_tenants(_file(tmp_path, text), env)
    assert "s3cr3t" not in str(caught.value)


def test_a_missing_tenants_file_says_to_create_it_or_unset_the_variable(tmp_path: Path) -> None:
    with pytest.raises(TenantsError, match=r"does not exist: create it.*unset RESERVOIR_TENANTS"):
        load_tenants(tmp_path / "nope.toml", {})


def test_tenant_settings_give_each_tenant_its_folder_prefix_secret_and_caps(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        """\
        [[tenant]]
        name = "north"
        base_url = "https://x.example/v2"
        client_id = "north-client"
        client_secret_env = "NORTH_SECRET"
        scope = "NTH"
        max_requests = 5000
        max_concurrency = 10

        [[tenant]]
        name = "demo"
        sandbox_seed = 11
        """,
    )
    env = {"NORTH_SECRET": "s3cr3t"}
    north, demo = load_tenants(path, env)
    base = Settings(data_dir=tmp_path / "data", lake_url="s3://bucket/prefix/")
    settings = tenant_settings(base, north, env)
    assert settings.data_dir == tmp_path / "data" / "tenant=north"
    assert settings.lake_url == "s3://bucket/prefix/tenant=north"
    assert settings.dagster_home == tmp_path / "data" / "dagster_home"  # shared
    assert (settings.client_secret, settings.scope, settings.tenant) == ("s3cr3t", "NTH", "north")
    assert (settings.max_requests, settings.max_concurrency) == (5000, 10)
    assert "s3cr3t" not in repr(settings)
    assert demo.uses_sandbox and demo.sandbox_seed == 11
    assert tenant_settings(base, demo, env).max_concurrency == 15
    assert select_tenants([north, demo], ["demo"]) == [demo]
    with pytest.raises(TenantsError, match=r"no tenant named 'east'.*known: north, demo"):
        select_tenants([north, demo], ["east"])


def test_tenant_options_without_a_tenants_file_say_to_set_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from pipelines.cli import app

    monkeypatch.delenv("RESERVOIR_TENANTS_FILE", raising=False)
    monkeypatch.setenv("RESERVOIR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "--tenant", "north"])
    assert result.exit_code == 2
    assert "need a tenants file: set RESERVOIR_TENANTS_FILE" in result.output
    monkeypatch.setenv("RESERVOIR_TENANTS_FILE", str(_file(tmp_path, '[[tenant]]\nname = "a"\n')))
    result = CliRunner().invoke(app, ["status", "--tenant", "b"])
    assert result.exit_code == 2
    assert "no tenant named 'b'" in result.output
    result = CliRunner().invoke(app, ["settings"])
    assert result.exit_code == 0 and "1 tenant(s) in " in result.output, result.output
    _file(tmp_path, '[[tenant]]\nname = "a"\nclient_secret_env = "A_SECRET"\n')
    result = CliRunner().invoke(app, ["settings"])
    assert result.exit_code == 2
    assert "not valid: tenants file" in result.output and "A_SECRET" in result.output


@pytest.mark.sandbox
@pytest.mark.slow
def test_reservoir_run_with_a_tenants_file_lands_the_good_tenant_and_names_the_failed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command line's path: the tenants file's embedded sandbox, started by the CLI, and a
    tenant whose service does not answer; exit 1 naming it, the other landed, then `status`."""
    from typer.testing import CliRunner

    from pipelines.cli import app

    path = _file(
        tmp_path,
        """\
        [[tenant]]
        name = "demo"
        sandbox_seed = 3

        [[tenant]]
        name = "gone"
        base_url = "http://127.0.0.1:9/service/v2"
        client_id = "c"
        client_secret_env = "GONE_SECRET"
        scope = "GON"
        """,
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RESERVOIR_TENANTS_FILE", str(path))
    monkeypatch.setenv("RESERVOIR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GONE_SECRET", "x")
    monkeypatch.setenv("DAGSTER_HOME", "unused")  # restored after the runs set the shared one
    result = CliRunner().invoke(app, ["run", "--all-tenants", "--mode", "full", "--quiet"])
    assert result.exit_code == 1, result.output
    assert "1 of 2 tenant(s) failed (1 landed): tenant gone: the service at" in result.output
    assert "did not answer" in result.output
    data = tmp_path / "data"
    assert (data / "tenant=demo" / "warehouse.duckdb").exists()
    assert (data / "dagster_home" / "dagster.yaml").exists()  # one instance, shared
    assert not (data / "tenant=demo" / "dagster_home").exists()
    with duckdb.connect(str(data / "group.duckdb"), read_only=True) as con:
        included = con.execute("select tenant, is_included from meta.tenants").fetchall()
        tenants = con.execute("select distinct tenant from tenants.occupancy_daily").fetchall()
    assert sorted(included) == [("demo", True), ("gone", False)]
    assert tenants == [("demo",)]

    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 0, result.output
    assert "tenant demo" in result.output and "tenant gone" in result.output

    # A run of one tenant keeps the others in the group.
    result = CliRunner().invoke(app, ["run", "--tenant", "gone", "--quiet"])
    assert result.exit_code == 1 and "tenant gone:" in result.output, result.output
    with duckdb.connect(str(data / "group.duckdb"), read_only=True) as con:
        tenants = con.execute("select distinct tenant from tenants.occupancy_daily").fetchall()
    assert tenants == [("demo",)]
