"""Dagster's PostgreSQL storage (runs, event log, schedules), with its connections kept open: the
same database, tables and schema (`dagster-postgres`'s own classes do every query), fewer
connections.

Why: `dagster-postgres` opens a new connection for every statement outside the web server
(SQLAlchemy's `NullPool`, so that many instances in one process never pile up idle
connections). A small run asks about 3,000 of them; each costs PostgreSQL a new backend process
and the run a TCP and authentication handshake: measured at 21.7 CPU seconds of PostgreSQL and
60 s wall for a run whose own CPU is 14 s (docs/benchmarks.md, "Session 11: Dagster on
PostgreSQL"). Here each of the three storages keeps one pooled connection (and a few more while
threads overlap), the pooling the web server turns on for itself (`optimize_for_webserver`),
with no statement timeout: a run's queries may take as long as they need, as without the pool.
Idle connections are recycled after `POOL_RECYCLE_SECONDS` so that a restarted server or a
proxy's idle cut costs at most one failed query.
"""

from __future__ import annotations

from typing import Any

from dagster_postgres import DagsterPostgresStorage
from dagster_postgres.utils import get_token_provider_from_config, pg_url_from_config

# A run's threads (the step, the log handler, the sensors' ticks) overlap a little.
POOL_MAX_OVERFLOW = 4
POOL_RECYCLE_SECONDS = 300
NO_STATEMENT_TIMEOUT = 0


class PooledPostgresStorage(DagsterPostgresStorage):
    """`DagsterPostgresStorage` whose run, event-log and schedule storages reuse a connection."""

    def __init__(self, postgres_url: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(postgres_url, *args, **kwargs)
        for storage in (self._run_storage, self._event_log_storage, self._schedule_storage):
            storage.optimize_for_webserver(
                statement_timeout=NO_STATEMENT_TIMEOUT,
                pool_recycle=POOL_RECYCLE_SECONDS,
                max_overflow=POOL_MAX_OVERFLOW,
            )

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: Any, config_value: Any
    ) -> PooledPostgresStorage:
        return cls(
            pg_url_from_config(config_value),
            config_value.get("should_autocreate_tables", True),
            inst_data=inst_data,
            token_provider=get_token_provider_from_config(config_value),
        )
