"""How a run lands data: the one settings object of the ingestion engine, every default once."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from assets.progress import waiting
from lake.locks import DEFAULT_LOCK_TIMEOUT, writer_lock
from lake.parts import DEFAULT_FLUSH_ROWS
from lake.store import Lake

EVENTS_SOURCE = "/events"
DEFAULT_MAX_EVENTS = 200_000  # one run reads at most this many events; the next run continues
DEFAULT_SWEEP_OVERLAP = timedelta(hours=1)  # datetimes have ms precision; ordering is unproven
# Each incremental run re-reads the events of this span (by eventDate) before its cursor: an
# event may become visible after events with higher ids (it committed late). Must exceed the
# longest such delay; 0 turns the window off (the cursor then follows eventId alone).
DEFAULT_EVENT_OVERLAP = timedelta(minutes=5)
AVAILABILITY_FULL_SHARE = 0.25  # refetch the whole horizon once this share of types changed
# Changed types read one by one (the endpoint takes one resourceId: a call per type and window,
# 3 over the 90-day horizon), up to this many; more are read in one pass over the whole horizon
# (3 calls) whose other types' records are dropped. A type's horizon is 1/N of the whole one (at
# the large scale ~360 of 380,000 records), so one by one costs far less to serve and decode
# while it stays within a few hundred requests (docs/benchmarks.md, "Session 14: freshness").
AVAILABILITY_TYPES_APART = 100
DEFAULT_QUARANTINE_THRESHOLD = 0.05
# A full batch may remove at most this share of its table's current keys (assets/guard.py);
# 1.0 confirms any removal.
DEFAULT_REMOVAL_GUARD = 0.5
DEFAULT_QUARANTINE_FLOOR = 5  # a table may always quarantine this many records (small tables)
DEFAULT_HORIZON_DAYS = 90
DEFAULT_EVERY_DAYS = 1  # reconcile reservation ids on every nightly sweep; 0 = off
# Finance has no events: each run re-reads journal reports, their entries and cash clearances
# from the last successful read of each table (the service's date) minus this overlap, so records
# entered a little late are read again; the nightly sweep re-reads the longer window below.
DEFAULT_FINANCE_OVERLAP = timedelta(days=2)
DEFAULT_SWEEP_FINANCE_WINDOW = timedelta(days=35)

Record = dict[str, Any]
Pages = AsyncIterator[list[Record]]
OpenClient = Callable[[], AbstractAsyncContextManager[Any]]


@dataclass(frozen=True)
class IngestSettings:
    """How a run lands data, in every mode (full extract, bootstrap, event feed, webhooks,
    sweep): one object, each default stated once."""

    # The business date: the first arrival date of the availability horizon, the day the event
    # path compares to detect a new day, and what finance windows count from. None = the
    # service's date, read by each run from the service (`assets.clock`); a date overrides it.
    today: date | None = None
    horizon_days: int = DEFAULT_HORIZON_DAYS
    include_pii: bool = False
    flush_rows: int = DEFAULT_FLUSH_ROWS
    # A stream whose share of quarantined records is above this is not committed.
    quarantine_threshold: float = DEFAULT_QUARANTINE_THRESHOLD
    # A full batch that would remove more than this share of its table's current records is
    # not landed (the run fails saying which table); 1.0 lands any removal.
    max_removed_share: float = DEFAULT_REMOVAL_GUARD
    # ...unless it quarantined at most this many records (`assets.quarantine.allowed`).
    quarantine_floor: int = DEFAULT_QUARANTINE_FLOOR
    # Worker processes that decode and normalise the pages of big streams: None = automatic (one
    # per core on 2 or more cores, at most 4), 0 = always in the run's own thread.
    normalise_workers: int | None = None
    max_events: int = DEFAULT_MAX_EVENTS
    sweep_overlap: timedelta = DEFAULT_SWEEP_OVERLAP
    event_overlap: timedelta = DEFAULT_EVENT_OVERLAP
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    availability_full_share: float = AVAILABILITY_FULL_SHARE
    availability_types_apart: int = AVAILABILITY_TYPES_APART
    # Sweep: reconcile reservation ids every N business days (0 = off; assets/reconcile.py).
    id_reconcile_every_days: int = DEFAULT_EVERY_DAYS
    finance_overlap: timedelta = DEFAULT_FINANCE_OVERLAP
    sweep_finance_window: timedelta = DEFAULT_SWEEP_FINANCE_WINDOW
    # Who takes the lake's writer lock (the Dagster run id): a run waiting for it says so.
    run_label: str = ""

    def writer_lock(self, lake: Lake) -> AbstractContextManager[Path]:
        """The lake's writer lock for this run: stamped with `run_label`; while another run
        holds it, the progress display says which one and since when."""
        return writer_lock(lake, self.lock_timeout, holder=self.run_label, on_wait=waiting)

    @property
    def business_date(self) -> date:
        """The run's business date; a run sets it from the service first (`assets.clock`)."""
        if self.today is None:
            raise RuntimeError(
                "internal error: the business date was used before it was read from the service "
                "(assets.clock.resolve_business_date)"
            )
        return self.today

    @property
    def horizon(self) -> tuple[date, date]:
        start = self.business_date
        return start, start + timedelta(days=max(self.horizon_days, 1) - 1)
