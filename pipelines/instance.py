"""The Dagster instance the CLI and `make dev` share: `<data dir>/dagster_home/dagster.yaml`,
written from the settings, with its storage in SQLite files there or on PostgreSQL
(RESERVOIR_DAGSTER_PG_URL, through dagster-postgres)."""

from __future__ import annotations

import json
import os

import dagster as dg

from pipelines.settings import DAGSTER_PG_ENV, Settings

# The first line marks a file this command manages: it is rewritten to follow the settings
# (RESERVOIR_DAGSTER_PG_URL). A file without it is the operator's own and is left alone.
MANAGED_MARK = "# Written by `reservoir` from its settings"
DAGSTER_YAML = f"""\
{MANAGED_MARK}; remove this line to keep your own edits.
# Runs launched by the CLI and by `make dev` share it.
telemetry:
  enabled: false
# The daemon fails runs that never start (a full disk, a launcher that died) so that the
# sensors, which skip while a run of their job is in progress, do not wait forever. A run whose
# process died after it started is failed by the sensors themselves (pipelines/sensors.py).
run_monitoring:
  enabled: true
  start_timeout_seconds: 180
  poll_interval_seconds: 60
# At most one run per tenant at a time: the queued run coordinator holds a tenant's next run
# until its current one ends. Every run of the lake and warehouse assets is one tenant's
# partition (tag dagster/partition, pipelines/partitions.py); the sensors, the schedule and the
# CLI also tag it reservoir/tenant. Each tenant's requests stay within its own cap and budget
# because each run has its own client.
concurrency:
  runs:
    tag_concurrency_limits:
      - key: "dagster/partition"
        value:
          applyLimitPerUniqueValue: true
        limit: 1
      - key: "reservoir/tenant"
        value:
          applyLimitPerUniqueValue: true
        limit: 1
"""
# Runs, event log and schedules on PostgreSQL (dagster-postgres), through a storage that keeps
# its connections open (`pipelines.pg_storage`). The URL is read from the environment when the
# instance loads, so its password is never written to this file.
POSTGRES_STORAGE_YAML = f"""\
storage:
  custom:
    module: pipelines.pg_storage
    class: PooledPostgresStorage
    config:
      postgres_url:
        env: {DAGSTER_PG_ENV}
"""
# The SQLite event log in Dagster's default place (`history/runs/` under the home), through a
# storage that keeps its connections open (`pipelines.sqlite_events`: a run's bookkeeping costs
# a fraction of the CPU). Anything that loads this instance (`dagster dev`, the daemon) imports
# `pipelines`, as it does for the code location.
SQLITE_EVENTS_YAML = """\
event_log_storage:
  module: pipelines.sqlite_events
  class: PooledSqliteEventLogStorage
  config:
    base_dir: {base_dir}
"""
# Files written by earlier versions, before the mark: rewritten too.
LEGACY_MARK = "# Written by `reservoir run` when missing."


def dagster_yaml(settings: Settings) -> str:
    """The instance configuration these settings ask for."""
    if settings.dagster_pg_url:
        return DAGSTER_YAML + POSTGRES_STORAGE_YAML
    events = settings.dagster_home.resolve() / "history" / "runs"
    return DAGSTER_YAML + SQLITE_EVENTS_YAML.format(base_dir=json.dumps(f"{events}{os.sep}"))


def prepare_instance(settings: Settings) -> dg.DagsterInstance:
    """A persistent Dagster instance under the data directory (shared with `make dev`): its
    storage in SQLite files there, or on PostgreSQL when RESERVOIR_DAGSTER_PG_URL is set."""
    home = settings.dagster_home.resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    wanted = dagster_yaml(settings)
    current = config.read_text() if config.exists() else None
    if current is None or (current != wanted and current.startswith((MANAGED_MARK, LEGACY_MARK))):
        config.write_text(wanted)
    os.environ["DAGSTER_HOME"] = str(home)
    if settings.dagster_pg_url:
        # Read by the instance through `env:` (a Settings built in code has it only here).
        os.environ[DAGSTER_PG_ENV] = settings.dagster_pg_url
    return dg.DagsterInstance.get()
