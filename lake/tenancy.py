"""Which tenant (concern) a data directory belongs to.

A tenants file (`pipelines.tenants`) gives each tenant the data directory
`<RESERVOIR_DATA_DIR>/tenant=<name>` and the lake prefix `<lake url>/tenant=<name>`: the
hive-style level is how every lake row carries its tenant (DuckDB, pyarrow and Spark readers
expose it as a `tenant` column), and the warehouse records it in `meta.build_settings`. A data
directory without that level is the single tenant of a deployment without a tenants file,
`default` (also its Dagster partition).
"""

from __future__ import annotations

from pathlib import Path

TENANT_DIR_PREFIX = "tenant="
DEFAULT_TENANT = "default"


def tenant_of(data_dir: Path | str) -> str:
    """The tenant whose data directory this is (`default` without a `tenant=` level)."""
    name = Path(data_dir).name
    if name.startswith(TENANT_DIR_PREFIX) and len(name) > len(TENANT_DIR_PREFIX):
        return name[len(TENANT_DIR_PREFIX) :]
    return DEFAULT_TENANT
