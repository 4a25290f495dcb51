"""One run against an open service: each step lands its tables in the run's shared batch."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from assets.availability import keep_what_differs
from assets.catalogue import CATALOGUE
from assets.diff import Diff, diff_against_lake
from assets.endpoints import Catalogue
from assets.fetch import by_ids, full_list, only_resources, stamp
from assets.finance import FinanceWindow, refresh_finance
from assets.holders import holder_ids
from assets.landing import Landing, LandReport, keys_of
from assets.pages import list_pages, service_requests
from assets.plan import event_time
from assets.refusal import read_refused, tolerating_refusal
from assets.run_report import RunReport
from assets.settings import IngestSettings, Pages, Record
from lake.state import Cursor
from lake.store import Lake
from service.api import merge
from service.errors import BadRequest

log = logging.getLogger(__name__)


class ChangeRun:
    """One run against an open service: each step lands its tables in the shared batch.

    `on_landed(name)` is called after each landing commits; tests raise from it to simulate a
    process killed between two tables.
    """

    def __init__(
        self,
        lake: Lake,
        service: Any,
        settings: IngestSettings,
        batch_id: str,
        report: RunReport,
        on_landed: Callable[[str], None] | None = None,
        catalogue: Catalogue = CATALOGUE,
    ) -> None:
        self.lake, self.service, self.settings = lake, service, settings
        self.batch_id, self.report, self.on_landed = batch_id, report, on_landed
        self.catalogue = catalogue
        self._landings: set[str] = set()
        # streams refused by an earlier run: left alone here, read in full after the run
        # (`assets.modes`), which brings every change skipped meanwhile
        self.waiting: set[str] = set(read_refused(lake))

    def landing(self, spec_name: str, kind: str = "delta") -> Landing:
        # Part files are named after the batch: a second landing of the same spec in one batch
        # would overwrite the first one's parts (and its quarantine), losing rows silently.
        if spec_name in self._landings:
            raise RuntimeError(
                f"internal error: {spec_name!r} landed twice in batch {self.batch_id}; put both "
                "into one landing (the second would overwrite the first one's files)"
            )
        self._landings.add(spec_name)
        return Landing(
            self.lake, self.catalogue.by_name[spec_name], self.batch_id, kind, self.settings
        )

    def _done(self, key: str, landing: Landing, *, skipped: bool = False) -> LandReport:
        if skipped:
            self.report.landed[key] = landing.skip()
            return landing.report
        started = time.perf_counter()
        try:
            rep = landing.commit()
        finally:
            landing.report.seconds += time.perf_counter() - started
        self.report.landed[key] = rep
        if self.on_landed is not None:
            self.on_landed(key)
        return rep

    async def _fill(self, landing: Landing, pages: Pages) -> None:
        """Every page into the landing (and out of the worker pool); on failure nothing of the
        stream lands.

        The requests made and the seconds spent meanwhile are the stream's own (its
        `LandReport`, shown per table in every run mode): a run fills one landing at a time, so
        nothing is counted twice; what no landing reads (events, the id list) stays run-level.
        """
        before, started = service_requests(self.service), time.perf_counter()
        try:
            async for page, at in stamp(pages):
                landing.add_page(page, at)
            landing.finish()
        except BaseException:
            landing.abort()
            raise
        finally:
            landing.report.requests += service_requests(self.service) - before
            landing.report.seconds += time.perf_counter() - started

    # -- events -------------------------------------------------------------------------

    async def read_events(self, after: int) -> list[Record]:
        """Events after the cursor, in eventId order, up to `max_events` (whole pages)."""
        events: list[Record] = []
        pages = self.service.events(after_event_id=after)
        try:
            async for page in pages:
                events.extend(page)
                if len(events) >= self.settings.max_events:
                    self.report.notes.append(
                        f"stopped after {len(events)} events (max_events); the next run continues"
                    )
                    break
        finally:
            aclose = getattr(pages, "aclose", None)
            if aclose is not None:
                await aclose()
        return events

    async def read_window(self, cursor: Cursor) -> list[Record] | None:
        """The events at or below the cursor with eventDate >= the cursor's date mark minus
        `event_overlap` (None when no window is read: overlap 0, or a facade without it).

        Normally one small page. Without a date mark (the bootstrap, old cursor rows) the mark
        is the eventDate of the newest event at or below the cursor: one more small request.
        """
        overlap = self.settings.event_overlap
        if overlap <= timedelta(0):
            return None
        if cursor.event_id <= 0:
            return []  # nothing lies at or below it
        mark = event_time(cursor.event_date)
        if mark is None:
            newest = await self.service.latest_event(up_to_event_id=cursor.event_id)
            mark = event_time(newest.get("eventDate")) if newest else None
            if mark is None:
                return [] if newest is None else None
        events: list[Record] = []
        pages = self.service.events(since=mark - overlap, up_to_event_id=cursor.event_id)
        try:
            async for page in pages:
                events.extend(page)
        except BadRequest as exc:
            # The interface does not show the feed's filters: a service that refuses eventDate
            # filtering must not stop every incremental run. The run goes on without the window
            # (the old eventId-only cursor) and says so; the applied set becomes unknown.
            note = (
                "the service refused the overlap window's eventDate filter "
                f"({exc.server_message or exc}); this run read no window. Set the incremental "
                "job's event_overlap_seconds to 0 to stop trying."
            )
            log.warning(note)
            self.report.notes.append(note)
            return None
        finally:
            aclose = getattr(pages, "aclose", None)
            if aclose is not None:
                await aclose()
        return events

    # -- keyed targets --------------------------------------------------------------------

    @tolerating_refusal()
    async def refresh_keyed(
        self, name: str, refresh: set[int], delete: set[int]
    ) -> LandReport | None:
        """Refetch ids; tombstone deleted ids and requested ids the service no longer has."""
        if not refresh and not delete:
            return None
        landing = self.landing(name)
        missing: set[int] = set()
        if refresh:
            spec = self.catalogue.by_name[name]
            await self._fill(landing, by_ids(self.service, spec, sorted(refresh)))
            missing = {i for i in refresh if (i,) not in landing.seen}
            if missing:
                # Asked once more before anything is removed: a record briefly missing (an
                # answer with no content, a replica behind) is not a deleted one.
                await self._fill(landing, by_ids(self.service, spec, sorted(missing)))
                missing = {i for i in refresh if (i,) not in landing.seen}
            if missing and len(missing) == len(refresh) and len(refresh) > 1:
                note = (
                    f"{name}: none of the {len(refresh)} records asked for by id came back, "
                    "twice; none was removed (the service may have answered with no content). "
                    "The nightly sweep checks them against the service's full list."
                )
                log.warning(note)
                self.report.notes.append(note)
                missing = set()
        if landing.report.quarantined:
            missing = set()  # a quarantined record is not a deleted one
        landing.add_tombstones([(i,) for i in sorted(delete | missing)])
        return self._done(name, landing)

    # -- type-scoped targets -----------------------------------------------------------------

    @tolerating_refusal("rates")
    async def refresh_rates(self, resources: set[int], removed: set[int]) -> LandReport | None:
        """All rates of the changed types; rates that vanished from a type are tombstoned."""
        if not resources and not removed:
            return None
        from service.api import merge

        landing = self.landing("rates")
        fetch = sorted(resources - removed)
        if fetch:
            limit = max(2, self.service.client.limiter.limit * 2)
            await self._fill(landing, merge([self.service.rates(r) for r in fetch], maxsize=limit))
        if not landing.report.quarantined:
            scope = resources | removed
            current = self.lake.current("rates")
            if current.num_rows:
                mask = pc.is_in(current.column("resource_id"), pa.array(sorted(scope), pa.int64()))
                landing.add_tombstones(keys_of(current.filter(mask), ["rate_id"]))
        return self._done("rates", landing)

    @tolerating_refusal()
    async def refresh_holders(
        self, name: str, holders: set[tuple[str, int]], removed: set[tuple[str, int]]
    ) -> LandReport | None:
        """Every record of the changed holders (implies of a type, add-on or offer), re-read;
        those that vanished from a holder, and all of a removed holder's, are tombstoned."""
        if not holders and not removed:
            return None
        from service.api import merge

        spec = self.catalogue.by_name[name]
        # an event may name an offer as an add-on: read it as the kind the full read uses
        kinds = holder_ids(spec.holders, self.lake)
        holders = {(kinds.get(i, k), i) for k, i in holders}
        landing = self.landing(name)
        calls = spec.holder_calls(holders - removed)
        if calls:
            limit = max(2, self.service.client.limiter.limit * 2)
            pages = [list_pages(self.service, spec, **kw) for kw in calls]
            await self._fill(landing, merge(pages, maxsize=limit))
        if not landing.report.quarantined:
            current = self.lake.current(spec.table.name)
            scope = holders | removed
            held = keys_of(current, ["holder_kind", "holder_id"])
            mask = pa.array([h in scope for h in held], pa.bool_())
            if current.num_rows:
                landing.add_tombstones(keys_of(current.filter(mask), list(spec.table.key)))
        return self._done(name, landing)

    @tolerating_refusal("availability")
    async def refresh_availability(
        self, resources: set[int], removed: set[int], *, whole_horizon: bool
    ) -> LandReport | None:
        """The horizon of the changed types (or the whole horizon), compared with the lake: only
        the records that differ land, as a delta (`assets.availability`)."""
        if not whole_horizon and not resources and not removed:
            return None
        start, end = self.settings.horizon
        landing = self.landing("availability")
        fetch = sorted(resources - removed)
        if whole_horizon:
            await self._fill(landing, self.service.availability(start, end))
        elif fetch and len(fetch) <= self.settings.availability_types_apart:
            # each changed type's horizon alone (the event names the type, not the dates): a
            # few requests per type instead of serving and decoding every type's records
            limit = max(2, self.service.client.limiter.limit * 2)
            reads = [self.service.availability(start, end, resource_id=r) for r in fetch]
            await self._fill(landing, merge(reads, maxsize=limit))
        elif fetch:
            # Many types: one pass over the horizon (a call per window) costs fewer requests
            # (the daily quota) than a call per window per type; the others' records are dropped.
            await self._fill(landing, only_resources(self.service.availability(start, end), fetch))
        try:
            diff = keep_what_differs(
                self.lake,
                landing,
                scope=None if whole_horizon else resources | removed,
                gone=removed,
                window=(start, end),
                max_removed_share=self.settings.max_removed_share,
            )
        except BaseException:
            landing.abort()
            raise
        self.report.diffs["availability"] = diff
        same = not (diff["differing"] or diff["removed"] or landing.report.quarantined)
        return self._done("availability", landing, skipped=same)

    # -- merges -----------------------------------------------------------------------------

    def land_merges(self, merges: list[Record]) -> LandReport | None:
        if not merges:
            return None
        landing = self.landing("customer_merges")
        landing.add_page(merges)
        return self._done("customer_merges", landing)

    # -- full lists compared with the lake -------------------------------------------------------

    @tolerating_refusal(default=Diff)
    async def reconcile_list(self, spec_name: str) -> Diff:
        """Re-read a small list in full; land it as a full batch only when it differs."""
        spec = self.catalogue.by_name[spec_name]
        landing = self.landing(spec_name, "full")
        await self._fill(landing, full_list(self.service, spec))
        diff = diff_against_lake(self.lake, landing, detect_removed=True)
        if diff.removed and not landing.seen:
            # Every record gone at once is far likelier a 204 outage or another tenant's
            # credentials than a real deletion. Reported as removed, it would make the day-roll
            # run tombstone every accommodation type's rates (measured: 6 of 6 in the test
            # fixture). Single deletions still arrive as DELETE events.
            note = (
                f"{spec_name}: the service listed no usable record (none, or all quarantined) "
                f"while the lake has {len(diff.removed)}; the list was not landed (kept as it "
                "was). Check the "
                "service settings (base URL, client id, scope) and the service's status."
            )
            log.warning(note)
            self.report.notes.append(note)
            self.report.diffs[spec_name] = {**diff.summary(), "refused": "empty read"}
            self._done(spec_name, landing, skipped=True)
            return Diff()
        self.report.diffs[spec_name] = diff.summary()
        self._done(spec_name, landing, skipped=diff.count == 0)
        return diff

    # -- finance (no events) ------------------------------------------------------------------

    async def refresh_finance(self, window: FinanceWindow) -> None:
        """Journal reports with their entries and cash clearances in `window` (assets.finance);
        each may be refused on its own."""
        await self._journal(window)
        await self._clearances(window)

    @tolerating_refusal("journal_reports", also=("journal_entries",))
    async def _journal(self, window: FinanceWindow) -> None:
        await refresh_finance(self, window, clearances=False)

    @tolerating_refusal("cash_clearances")
    async def _clearances(self, window: FinanceWindow) -> None:
        await refresh_finance(self, window, journal=False)
