"""The tenants as a Dagster dynamic partition (`tenants`) of every lake and warehouse asset.

Why always partitioned: Dagster cannot make one asset partitioned in one deployment and not in
another without reading the environment when the definitions load, which the code location never
does. So the single tenant of a data directory (no RESERVOIR_TENANTS_FILE) is the partition
`default`, and each tenant of the file is the partition of its name. A partition key decides
only which settings a run's resources take, when the run starts (`settings_for_partition`):
`default` = the resources as wired (RESERVOIR_*), `<name>` = `pipelines.tenants.tenant_settings`
of that tenant (its service, the secret from its variable, cap, budget, data directory and lake
prefix). Materializations and check evaluations are then recorded per tenant in the shared
instance, and the UI shows the tenants as partitions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import dagster as dg

from pipelines.settings import Settings
from pipelines.tenants import (
    DEFAULT_TENANT,
    TENANT_TAG,
    TENANTS_ENV,
    TenantsError,
    load_tenants,
    select_tenants,
    tenant_settings,
    tenants_file,
)

PARTITIONS_NAME = "tenants"
TENANTS = dg.DynamicPartitionsDefinition(name=PARTITIONS_NAME)
PARTITION_TAG = "dagster/partition"
__all__ = ["DEFAULT_TENANT", "TENANTS"]  # Dagster's own tag for a run's partition key

Spec = TypeVar("Spec")


def partitioned_checks(build: Callable[[], list[Spec]]) -> list[Spec]:
    """Check specs built with `partitions_def=TENANTS`, so that each evaluation is recorded
    under its tenant; Dagster marks the argument as a preview, which is what we want here."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="Specifying a partitions_def on an AssetCheckSpec"
        )
        return build()


def tenant_names(env: Mapping[str, str] | None = None) -> list[str]:
    """The partition keys of this deployment: the tenants file's names, else `default`.
    Raises TenantsError for a wrong file (the message says what to do)."""
    path = tenants_file(env)
    if path is None:
        return [DEFAULT_TENANT]
    return [t.name for t in load_tenants(path, env)]


def settings_for_partition(
    name: str,
    *,
    data_dir: str | None = None,
    lake_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings | None:
    """The settings a run of partition `name` takes, read now (when the run starts): None for
    `default` (the resources as wired), else the tenant's from the tenants file, under the
    resource's data directory and lake URL when it has them (else RESERVOIR_DATA_DIR and
    RESERVOIR_LAKE_URL)."""
    if name == DEFAULT_TENANT:
        return None
    path = tenants_file(env)
    if path is None:
        raise TenantsError(
            f"the run is for tenant {name!r} but {TENANTS_ENV} is not set in the environment of "
            "the code location and its runs; set it to the tenants file (see .env.example)."
        )
    (tenant,) = select_tenants(load_tenants(path, env), [name])
    base = Settings.from_env(env)
    base = replace(
        base,
        data_dir=Path(data_dir) if data_dir else base.data_dir,
        lake_url=lake_url or base.lake_url,
    )
    return tenant_settings(base, tenant, env)


def run_partition(context: dg.InitResourceContext) -> str | None:
    """The partition key of the run a resource is initialised for (None outside a run)."""
    run = context.run
    return run.tags.get(PARTITION_TAG) if run is not None else None


def check_bound(bound: str | None, name: str) -> bool:
    """Whether a resource bound to tenant `bound` (the CLI binds its tenant's resources; None =
    the wiring of the code location) serves partition `name` as it is."""
    if bound is None:
        return name == DEFAULT_TENANT
    if bound != name:
        raise TenantsError(
            f"resources bound to tenant {bound!r} cannot run partition {name!r}; launch the "
            "run with the partition of its tenant."
        )
    return True


def ensure_partitions(instance: dg.DagsterInstance, names: Sequence[str]) -> list[str]:
    """Add the tenants that are not partitions yet; returns those added."""
    missing = [n for n in names if not instance.has_dynamic_partition(PARTITIONS_NAME, n)]
    if missing:
        instance.add_dynamic_partitions(PARTITIONS_NAME, missing)
    return missing


def tenant_tags(name: str) -> dict[str, str]:
    """A run's tenant tag: the run queue starts one run per value at a time."""
    return {TENANT_TAG: name}
