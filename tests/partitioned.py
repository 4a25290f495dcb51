"""Running the partitioned lake and warehouse assets in tests: every asset is partitioned by
tenant (`pipelines.partitions`), so a test run names its tenant's partition (the single tenant's
`default` unless told) in an instance that knows it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg

from pipelines.partitions import DEFAULT_TENANT, ensure_partitions


def tenant_instance(
    instance: dg.DagsterInstance | None = None, tenants: Sequence[str] = (DEFAULT_TENANT,)
) -> dg.DagsterInstance:
    """`instance` (a new ephemeral one by default) with `tenants` as partitions."""
    instance = instance or dg.DagsterInstance.ephemeral()
    ensure_partitions(instance, list(tenants))
    return instance


def partition_kw(kw: dict[str, Any]) -> dict[str, Any]:
    """`dg.materialize`/`execute_in_process` keywords with the partition and its instance."""
    key = kw.pop("partition_key", DEFAULT_TENANT)
    return {**kw, "partition_key": key, "instance": tenant_instance(kw.get("instance"), [key])}


def materialize(assets: Sequence[Any], **kw: Any) -> dg.ExecuteInProcessResult:
    """`dg.materialize` of the tenant's partition (`default` unless `partition_key`)."""
    return dg.materialize(assets, **partition_kw(kw))
