"""deploy/: the Helm values parse and say what docs/scaling.md promises, and the code location
image's Dockerfile copies files that exist and serves the module Dagster loads. (Docker and a
cluster are not available here: this checks what can be checked without them.)"""

from __future__ import annotations

import importlib
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from pipelines.jobs import JOBS
from pipelines.partitions import TENANTS
from pipelines.settings import ENV_VARS

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "values.yaml").read_text())


def _dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of deploy/Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def test_runs_launch_on_kubernetes_with_instance_storage_on_postgres(values: dict) -> None:
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    limits = launcher["runK8sConfig"]["containerConfig"]["resources"]["limits"]
    assert limits["memory"] == "6Gi"  # above the large-scale build's 2.77 GB peak (docs/scaling.md)
    assert launcher["runK8sConfig"]["jobSpecConfig"]["backoffLimit"] == 0
    postgres = values["postgresql"]
    assert postgres["enabled"] is False and postgres["postgresqlHost"]
    assert values["generatePostgresqlPasswordSecret"] is False
    assert values["global"]["postgresqlSecretName"]


def test_one_run_per_tenant_at_a_time(values: dict) -> None:
    coordinator = values["dagsterDaemon"]["runCoordinator"]
    assert coordinator["enabled"] and coordinator["type"] == "QueuedRunCoordinator"
    limits = coordinator["config"]["queuedRunCoordinator"]["tagConcurrencyLimits"]
    per_value = {"value": {"applyLimitPerUniqueValue": True}, "limit": 1}
    assert {"key": "dagster/partition", **per_value} in limits
    assert {"key": "reservoir/tenant", **per_value} in limits
    assert not [rule for rule in limits if rule["key"] == "reservoir/lake_writer"]
    # Every job that writes a lake is partitioned by tenant, so its runs carry the partition
    # tag the limit counts (compaction too: it takes the lake's writer lock).
    from pipelines.definitions import defs

    partitioned = {j.name for j in JOBS if defs.resolve_job_def(j.name).partitions_def == TENANTS}
    assert partitioned == {j.name for j in JOBS}


def test_the_code_location_serves_the_module_the_image_serves(values: dict) -> None:
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    args = deployment["dagsterApiGrpcArgs"]
    module = args[args.index("--module-name") + 1]
    importlib.import_module(module)  # the code location loads
    (cmd,) = [a for i, a in _dockerfile() if i == "CMD"]
    command = yaml.safe_load(cmd)  # exec form: a JSON list
    assert command[:3] == ["dagster", "api", "grpc"]
    assert command[command.index("--module-name") + 1] == module
    assert str(deployment["port"]) == command[command.index("--port") + 1]


def test_settings_named_in_the_values_are_documented(values: dict) -> None:
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    names = {e["name"] for e in deployment["env"]}
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    names |= {v.split("=", 1)[0] for v in launcher["envVars"]}
    assert names and names <= set(ENV_VARS)
    # The data volume is mounted where RESERVOIR_DATA_DIR points, in the code server and runs.
    data_dir = next(e["value"] for e in deployment["env"] if e["name"] == "RESERVOIR_DATA_DIR")
    assert {m["mountPath"] for m in deployment["volumeMounts"]} == {data_dir}
    mounts = launcher["runK8sConfig"]["containerConfig"]["volumeMounts"]
    assert {m["mountPath"] for m in mounts} == {data_dir}


def test_the_dockerfile_copies_files_that_exist_and_installs_a_declared_extra() -> None:
    instructions = _dockerfile()
    assert instructions[0][0] == "FROM"
    copied = []
    for instruction, args in instructions:
        if instruction == "COPY":
            *sources, _dest = shlex.split(args)
            copied += sources
    for source in copied:
        assert (ROOT / source).exists(), f"deploy/Dockerfile copies {source}, which is missing"
    # Every package pyproject.toml installs is copied before `pip install`.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert packages <= set(copied)
    (install,) = [a for i, a in instructions if i == "RUN" and "pip install" in a]
    extras = re.findall(r"\.\[([a-z0-9,_-]+)\]", install)
    assert extras
    for extra in extras[0].split(","):
        assert extra in project["project"]["optional-dependencies"]
    assert any("dagster-k8s==" in d for d in project["project"]["optional-dependencies"]["k8s"])
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and "data" in ignored


def test_the_image_builds_the_c_extensions_where_the_server_imports_them() -> None:
    """The install builds `assets._columns` and `sandbox.world._rowjoin` (pyproject.toml's
    ext-modules, optional: where they cannot be built pip still succeeds): the image installs a
    compiler first, copies each built module beside the sources the gRPC server imports from
    its working directory, and fails the build when the normaliser would be left on its Python
    fallback."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    exts = {e["name"]: e for e in project["tool"]["setuptools"]["ext-modules"]}
    assert set(exts) == {"assets._columns", "sandbox.world._rowjoin"}
    for ext in exts.values():
        assert ext["optional"] is True
        for source in ext["sources"]:
            assert (ROOT / source).exists()
    instructions = _dockerfile()
    (install,) = [a for i, a in instructions if i == "RUN" and "pip install" in a]
    steps = [s.strip() for s in install.split("&&")]
    pip = next(i for i, s in enumerate(steps) if s.startswith("pip install"))
    compiler = next(i for i, s in enumerate(steps) if "apt-get install" in s and " gcc" in s)
    assert compiler < pip
    copy = next(i for i, s in enumerate(steps) if s.startswith("cp ") and "assets._columns" in s)
    check = next(i for i, s in enumerate(steps) if "c.COMPILED" in s)
    assert pip < copy < check
    rowjoin = next(
        i for i, s in enumerate(steps) if s.startswith("cp ") and "sandbox.world._rowjoin" in s
    )
    assert pip < rowjoin and steps[rowjoin].endswith("sandbox/world/")
    workdir = next(a for i, a in instructions if i == "WORKDIR")
    assert copy and workdir == "/opt/reservoir"
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "**/*.so" in ignored  # a module built for the host is never copied in
