"""Dagster resources: the reservation service client and the lake (with extraction settings).

Secrets arrive only at the wiring site (`pipelines/definitions.py`) as `dg.EnvVar`, resolved when
a run starts, never at import time. A run of a tenant's partition gets each resource as that
tenant's copy (`for_tenant`, `pipelines.partitions`): its service, the secret read from its
variable when the run starts, its cap, budget, data directory and lake prefix.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import date
from pathlib import Path
from typing import Any, Self

import dagster as dg

from assets.settings import (
    DEFAULT_HORIZON_DAYS,
    DEFAULT_QUARANTINE_FLOOR,
    DEFAULT_QUARANTINE_THRESHOLD,
    DEFAULT_REMOVAL_GUARD,
)
from lake.parts import DEFAULT_FLUSH_ROWS, new_batch_id
from lake.store import Lake
from pipelines.partitions import check_bound, run_partition, settings_for_partition
from pipelines.settings import client_tuning, lake_url_from_env, removed_share

DEFAULT_MAX_CONCURRENCY = 15  # the service caps concurrent calls per IP address at 15
DEFAULT_PAGE_SIZE = 1000
DEFAULT_MAX_REQUESTS = 20_000  # the client's default; below the 25,000 free requests a day
DEFAULT_MAX_RESPONSE_MB = 64.0


class ReservationServiceResource(dg.ConfigurableResource):
    """Builds the async service client for one asset execution.

    `base_url` None (or empty) means "the embedded sandbox": the `reservoir run` command starts
    it and passes its URL and credentials; a bare Dagster run cannot, so it says what to do.
    """

    base_url: str | None = None
    client_id: str = ""
    client_secret: str = ""
    scope: str = ""
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    page_size: int = DEFAULT_PAGE_SIZE
    # Requests one run may send (0 = no limit) and the largest body read: a run against a
    # service that repeats its pages or sends a runaway record stops with a message.
    max_requests: int = DEFAULT_MAX_REQUESTS
    max_response_mb: float = DEFAULT_MAX_RESPONSE_MB
    # None = the client's defaults (service/config.py): 30 s of silence within a response,
    # 100 reservations per details page, camelCase token fields, no `locale` header.
    timeout: float | None = None
    details_page_size: int | None = None
    auth_style: str | None = None
    locale: str | None = None
    events_path: str = "/events"
    # Archived units, types and channels still count for the nights before they were archived,
    # so the lake keeps them: history needs them even when the service hides them by default.
    show_archived: bool = True
    # The tenant these values belong to (the CLI binds them); None = the code location's wiring,
    # which serves the partition `default` and takes a tenant's values from the tenants file.
    tenant: str | None = None

    def for_tenant(self, name: str) -> Self:
        """This resource for the tenant `name` (a partition key); itself for its own tenant."""
        if check_bound(self.tenant, name):
            return self
        settings = settings_for_partition(name)
        assert settings is not None
        return self.model_copy(
            update={
                "base_url": settings.base_url,
                "client_id": settings.client_id or "",
                "client_secret": settings.client_secret or "",
                "scope": settings.scope or "",
                "max_concurrency": settings.max_concurrency,
                "max_requests": settings.max_requests,
                "tenant": name,
            }
        )

    def create_resource(self, context: dg.InitResourceContext) -> Self:
        key = run_partition(context)
        resource = self if key is None else self.for_tenant(key)
        return resource.with_environment()

    def with_environment(self) -> Self:
        """This resource with the client's limits and tuning that the run's environment sets
        (RESERVOIR_MAX_CONCURRENCY, _MAX_REQUESTS, _TIMEOUT, ...: `pipelines.settings.
        client_tuning`) where the wiring left them unset. The code location wires only what
        `dg.EnvVar` can (it cannot be optional), so without this a deployment ran at the
        defaults whatever its environment said; what the CLI or a tenant sets explicitly wins."""
        unset = {k: v for k, v in client_tuning().items() if k not in self.model_fields_set}
        return self.model_copy(update=unset) if unset else self

    def service_config(self) -> Any:
        from service.config import ServiceConfig
        from service.errors import ConfigurationError

        if not self.base_url:
            raise ConfigurationError(
                "no service URL: run `reservoir run` (it starts the embedded sandbox and passes "
                "its URL) or set RESERVOIR_BASE_URL, RESERVOIR_CLIENT_ID, "
                "RESERVOIR_CLIENT_SECRET and RESERVOIR_SCOPE for the real service"
            )
        return ServiceConfig(
            base_url=self.base_url,
            client_id=self.client_id,
            client_secret=self.client_secret,
            scope=self.scope,
            max_concurrency=self.max_concurrency,
            page_size=self.page_size,
            max_requests=self.max_requests,
            max_response_bytes=round(self.max_response_mb * 1024 * 1024),
            events_path=self.events_path,
            show_archived=self.show_archived,
            **{
                name: value
                for name in ("timeout", "details_page_size", "auth_style", "locale")
                if (value := getattr(self, name)) is not None
            },
        )

    def source_id(self) -> str:
        """Which service and concern this is (never the credentials): recorded with the lake."""
        return f"the service at {self.base_url} (scope {self.scope or '-'})"

    def open_client(self) -> AbstractAsyncContextManager[Any]:
        """A fresh `ReservationService` (async context manager); one per asset execution."""
        from service.api import ReservationService

        return ReservationService.connect(self.service_config())


_PULLED: set[tuple[str, str]] = set()  # lakes brought from their store in this process


class LakeResource(dg.ConfigurableResource):
    """Where the lake lives and the rules for what lands in it."""

    data_dir: str = "./data"
    # A table fails when it quarantines more than max(threshold x records, floor) records; the
    # lake run config and RESERVOIR_QUARANTINE_MAX_SHARE / _FLOOR override these.
    quarantine_threshold: float = DEFAULT_QUARANTINE_THRESHOLD
    # A full batch that would remove more than this share of a table's current records is not
    # landed (assets/guard.py); 1.0 confirms a real mass deletion.
    max_removed_share: float = DEFAULT_REMOVAL_GUARD  # RESERVOIR_MAX_REMOVED_SHARE when unset
    quarantine_floor: int = DEFAULT_QUARANTINE_FLOOR
    include_customer_pii: bool = False
    flush_rows: int = DEFAULT_FLUSH_ROWS
    availability_horizon_days: int = DEFAULT_HORIZON_DAYS
    # The business date (ISO), overriding the service's date (replays, tests); None = the date
    # the service states (its responses' Date header), never this machine's (assets/clock.py).
    availability_start: str | None = None
    compact_min_files: int = 8  # compaction folds a table once it has this many files
    # Quarantined raw records (may hold personal data) older than this many days are dropped
    # when compaction folds the quarantine; None keeps every record.
    quarantine_retention_days: int | None = None
    # Compaction keeps this many of the newest files of each state (cursor, marks); only the
    # newest is read, the rest is recent history for inspection.
    state_history: int = 100
    batch_id: str | None = None  # pin the batch id (tests, replays); None = from the run
    # Worker processes that decode and normalise the pages of big streams, so the process that
    # talks HTTP only fetches: None = one per core (at most 4; none on one core), 0 = never.
    normalise_workers: int | None = None
    # The source this lake belongs to, as recorded in its run state; None = the service
    # resource's URL and scope (`reservoir run` names the embedded sandbox by seed and scale).
    source: str | None = None
    # The lake on object storage (s3://bucket/prefix, Delta Lake tables); None = the
    # RESERVOIR_LAKE_URL of the run's environment, and when that is unset too, the data
    # directory's lake folder alone. With a URL that folder is the store's local cache.
    lake_url: str | None = None
    tenant: str | None = None  # as ReservationServiceResource.tenant

    def for_tenant(self, name: str) -> Self:
        """This resource for the tenant `name`: its data directory and lake prefix."""
        if check_bound(self.tenant, name):
            return self
        settings = settings_for_partition(name, data_dir=self.data_dir, lake_url=self.lake_url)
        assert settings is not None
        return self.model_copy(
            update={
                "data_dir": str(settings.data_dir),
                "lake_url": settings.lake_url,
                "tenant": name,
            }
        )

    def create_resource(self, context: dg.InitResourceContext) -> Self:
        key = run_partition(context)
        resource = self if key is None else self.for_tenant(key)
        # as the service's limits: the environment's guard where the wiring left it unset
        share = None if "max_removed_share" in resource.model_fields_set else removed_share()
        return (
            resource if share is None else resource.model_copy(update={"max_removed_share": share})
        )

    def lake(self) -> Lake:
        root = Path(self.data_dir) / "lake"
        url = self.lake_url or lake_url_from_env()
        if not url:
            return Lake(root)
        from lake.remote import DeltaRemote

        lake = Lake(root, DeltaRemote(url))
        key = (str(root.resolve()), url)
        # Once per process: this process's commits keep the cache current after that, and run
        # state (what long-lived processes such as the sensors read) is read from the store.
        if key not in _PULLED:
            lake.pull()
            _PULLED.add(key)
        return lake

    def today(self) -> date | None:
        """The business date override; None = the service's date, read by each run."""
        return date.fromisoformat(self.availability_start) if self.availability_start else None

    def batch_id_for(self, context: dg.AssetExecutionContext | dg.OpExecutionContext) -> str:
        """One batch id per run, shared by all its tables; a re-executed run keeps it.

        Derived from the root run (the first run of a re-execution chain): its start time and
        the first 8 hex digits of its id, so re-executing overwrites the same files.
        """
        if self.batch_id:
            return self.batch_id
        run = context.run
        root_id = run.root_run_id or run.run_id
        record = context.instance.get_run_record_by_id(root_id)
        at = record.create_timestamp if record is not None else None
        return new_batch_id(at, root_id.replace("-", "")[:8])
