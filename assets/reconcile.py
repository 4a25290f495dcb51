"""Reservation id reconciliation: tombstone the reservations the service no longer has.

Why: a deleted reservation has no `modifiedDate` to find it by, so the sweep's modified-since
read cannot see a deletion, and the event feed is the only other path. When its DELETE event is
lost (the feed's retention is unknown, real-service-notes section 7), the reservation would stay
live in the lake forever and inflate occupancy and revenue. The notes advise a periodic full
reconciliation; for deletions only the *set of ids* matters, and that is cheap to read.

How (a step of `assets.modes.sweep`, under the lake's writer lock for the whole run):

1. `due`: skipped when turned off (`every_days = 0`) or when the last complete reconciliation
   (state `lake/_state/reservation_ids/`) is fewer than `every_days` business days old.
2. Snapshot the lake's live reservation ids, then read every reservation id from the plain
   `/reservations` list (no sections, ~0.4 KB a record) by id-keyset paging at a large page size
   (the server clamps `size` silently and reports what it used; keyset paging follows that).
   Cost: about ceil(ids / page size) + 1 requests.
3. Missing = snapshot - read. **Guard rail**: an empty read, or more missing than `max_share` of
   the lake's reservations, refuses: `ReservationIdsRefused` fails the sweep before it lands
   anything, because a mass deletion from a bad read (a scope or credential of another tenant,
   an outage answering 204 to every list) would be data loss.
4. Confirm: the missing ids are asked for by id (`/reservations?reservationIds=...`, URL-safe
   batches, usually one request); only ids not returned are removed, the rule the incremental
   path applies to an id it asked for and did not get back. An incomplete list read (paging
   cut short) therefore costs requests, never data; it is reported (`found_by_id`).
5. The removed ids become tombstones in the sweep's reservations landing (one commit per table
   and batch): a root row with `_is_deleted` like a DELETE event makes, and the lake's child
   rule takes the reserved resources, bill lines and subjects out of the current state with it.

Races: only ids in the lake snapshot can be removed. The snapshot is taken under the writer
lock before the read starts and nothing lands in between, so a reservation created during the
read (absent from the read) is not in the snapshot. Keyset paging on the id sees exactly once
every record present for the whole read, so a snapshot id absent from a completed read was
deleted (or hidden, e.g. archived) before or during it; the confirm step asks once more. A
reservation deleted during the read but still seen stays live until its event or the next
reconciliation. A later DELETE event for an id removed here tombstones it again: harmless.

Free of Dagster; `assets.modes.sweep` calls it, `pipelines.lake_assets` configures it (the sweep mode).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol

from assets.pages import service_requests
from assets.settings import DEFAULT_EVERY_DAYS
from lake.store import Lake

log = logging.getLogger("assets.reconcile")

RECONCILE_STATE = "reservation_ids"
LIST_PATH = "/reservations"
ID_FIELD = "reservationId"
DEFAULT_MAX_REMOVED_SHARE = 0.2  # refuse to tombstone more than this share of the lake
DEFAULT_ID_PAGE_SIZE = 2000  # asked for; the server clamps to its maximum and says so
SAMPLE = 10
RECHECK_DAYS = 7  # the sweep asks again about reservations tombstoned this recently
RECHECK_MAX = 5_000  # at most this many per sweep (a few by-id requests)


class Settings(Protocol):
    @property
    def business_date(self) -> date: ...


class Report(Protocol):
    diffs: dict[str, dict[str, Any]]
    notes: list[str]


class ChangeRun(Protocol):
    """What the id reconciliation uses of a run (`assets.run.ChangeRun`)."""

    lake: Lake
    service: Any
    settings: Settings
    batch_id: str
    report: Report


class Landing(Protocol):
    """What it uses of the run's reservations landing (`assets.landing.Landing`)."""

    seen: set[tuple[Any, ...]]

    def add_tombstones(self, keys: Any, source: str = ...) -> None: ...


class ReservationIdsRefused(RuntimeError):
    """The id read looks wrong (empty, or it would remove too much): nothing was tombstoned."""


@dataclass(frozen=True)
class IdReconcileSettings:
    """How often the id reconciliation runs, how much it may remove, how big its pages are."""

    every_days: int = DEFAULT_EVERY_DAYS
    max_removed_share: float = DEFAULT_MAX_REMOVED_SHARE
    page_size: int | None = None  # None: the larger of the client's page size and 2000

    def __post_init__(self) -> None:
        if self.every_days < 0:
            raise ValueError(
                f"id_reconcile_every_days must be 0 (off) or a number of days, not "
                f"{self.every_days}"
            )
        if not 0 < self.max_removed_share <= 1:
            raise ValueError(
                f"id_reconcile_max_share must be in (0, 1], not {self.max_removed_share}: it is "
                "the largest share of the lake's reservations one sweep may tombstone"
            )
        if self.page_size is not None and self.page_size < 1:
            raise ValueError(f"id_page_size must be at least 1, not {self.page_size}")

    def size_for(self, service: Any) -> int:
        if self.page_size is not None:
            return self.page_size
        configured = getattr(getattr(service, "config", None), "page_size", None)
        return max(int(configured or 0), DEFAULT_ID_PAGE_SIZE)


@dataclass
class IdReconcile:
    """What the id reconciliation found; `removed` is tombstoned by `tombstone_into`."""

    skipped: str | None = None  # why it did not run
    lake_ids: int = 0
    service_ids: int = 0
    damaged: int = 0  # list records without an integer reservationId (ignored, see confirm)
    missing: int = 0  # in the lake, not in the list read
    found_by_id: int = 0  # missing from the list but returned when asked for by id
    held_back: int = 0  # missing, not returned, but not removed (confirm answer not trusted)
    removed: set[tuple[int]] = field(default_factory=set)
    page_size: int = 0
    list_requests: int = 0
    confirm_requests: int = 0
    seconds: float = 0.0

    @property
    def ran(self) -> bool:
        return self.skipped is None

    def summary(self) -> dict[str, Any]:
        return {
            "ran": self.ran,
            "skipped": self.skipped,
            "lake_ids": self.lake_ids,
            "service_ids": self.service_ids,
            "damaged": self.damaged,
            "missing": self.missing,
            "found_by_id": self.found_by_id,
            "held_back": self.held_back,
            "removed": len(self.removed),
            "sample": [list(k) for k in sorted(self.removed)[:SAMPLE]],
            "page_size": self.page_size,
            "list_requests": self.list_requests,
            "confirm_requests": self.confirm_requests,
            "requests": self.list_requests + self.confirm_requests,
            "seconds": round(self.seconds, 3),
        }


def due(lake: Lake, settings: IdReconcileSettings, today: date) -> str | None:
    """None when the reconciliation should run today, else why not."""
    if settings.every_days == 0:
        return "turned off (id_reconcile_every_days = 0)"
    row = lake.read_state(RECONCILE_STATE) or {}
    last = row.get("business_date")
    if not last:
        return None
    days = (today - date.fromisoformat(last)).days
    if 0 <= days < settings.every_days:  # a business date moved backwards runs it again
        return (
            f"last complete run on {last}, {days} day(s) ago; runs every "
            f"{settings.every_days} day(s)"
        )
    return None


def _ids(records: list[dict[str, Any]]) -> tuple[set[int], int]:
    ids: set[int] = set()
    damaged = 0
    for record in records:
        value = record.get(ID_FIELD)
        if isinstance(value, int) and not isinstance(value, bool):
            ids.add(value)
        else:
            damaged += 1
    return ids, damaged


async def read_service_ids(service: Any, page_size: int) -> tuple[set[int], int]:
    """Every reservation id of the plain list (id-keyset paging) and the count of damaged records.

    Any failure of the read raises: an incomplete read is never used.
    """
    ids: set[int] = set()
    damaged = 0
    async for page in service.client.iter_keyset(LIST_PATH, ID_FIELD, size=page_size):
        got, bad = _ids(page)
        ids |= got
        damaged += bad
    return ids, damaged


def check_guard_rail(
    lake_ids: int, service_ids: int, missing: set[int], settings: IdReconcileSettings
) -> None:
    """Raise `ReservationIdsRefused` when the read would remove too much to be believable."""
    what_to_check = (
        "Check that the service settings (RESERVOIR_BASE_URL, RESERVOIR_CLIENT_ID, "
        "RESERVOIR_SCOPE) point at the tenant this lake was loaded from - a wrong scope or "
        "credential reads another tenant's reservations - and whether the service is having an "
        "outage that answers lists with 204 or empty pages (compare `GET /reservations?size=1` "
        "totalElements with the lake). If the deletions are real (e.g. a purge of old "
        "reservations), run the sweep once with a larger `id_reconcile_max_share` (sweep_job, "
        "op `reconcile`) or with `id_reconcile_every_days: 0` to skip this check."
    )
    if service_ids == 0:
        raise ReservationIdsRefused(
            f"reservation id reconciliation refused: the service listed no reservation ids at "
            f"all while the lake has {lake_ids} live reservations. Nothing was tombstoned and "
            f"the sweep stopped before landing anything. {what_to_check}"
        )
    share = len(missing) / lake_ids if lake_ids else 0.0
    if share > settings.max_removed_share:
        sample = ", ".join(str(i) for i in sorted(missing)[:SAMPLE])
        raise ReservationIdsRefused(
            f"reservation id reconciliation refused: {len(missing)} of the lake's {lake_ids} "
            f"live reservations ({share:.1%}) are missing from the service's list of "
            f"{service_ids} ids, above the limit of {settings.max_removed_share:.0%} "
            f"(id_reconcile_max_share); e.g. {sample}. Nothing was tombstoned and the sweep "
            f"stopped before landing anything. {what_to_check}"
        )


async def confirm_missing(service: Any, missing: set[int]) -> tuple[set[int], bool]:
    """Ask for the missing ids by id: (ids returned, whether every record had a readable id)."""
    found: set[int] = set()
    trusted = True
    async for page in service.reservations(ids=sorted(missing)):
        got, bad = _ids(page)
        found |= got & missing
        trusted = trusted and not bad
    return found, trusted


async def reconcile_reservation_ids(run: ChangeRun, settings: IdReconcileSettings) -> IdReconcile:
    """Find the lake's reservations the service no longer has; raise if the read looks wrong.

    Lands nothing: the caller puts `result.removed` into its reservations landing with
    `tombstone_into` (one commit per table per batch) and calls `record` once it committed.
    """
    lake, service = run.lake, run.service
    result = IdReconcile(skipped=due(lake, settings, run.settings.business_date))
    if result.skipped is None:
        started = time.perf_counter()
        snapshot = set(lake.current_ids("reservations", "reservation_id"))
        result.lake_ids = len(snapshot)
        if not snapshot:
            result.skipped = "the lake has no reservations yet"
        else:
            await _reconcile(run, service, settings, snapshot, result)
        result.seconds = time.perf_counter() - started
    run.report.diffs["reservation_ids"] = result.summary()  # `record` updates it after landing
    if result.skipped is not None:
        run.report.notes.append(f"reservation id reconciliation skipped: {result.skipped}")
    return result


async def _reconcile(
    run: ChangeRun,
    service: Any,
    settings: IdReconcileSettings,
    snapshot: set[int],
    result: IdReconcile,
) -> None:
    result.page_size = settings.size_for(service)
    before = service_requests(service)
    listed, result.damaged = await read_service_ids(service, result.page_size)
    result.list_requests = service_requests(service) - before
    result.service_ids = len(listed)
    missing = snapshot - listed
    result.missing = len(missing)
    check_guard_rail(len(snapshot), len(listed), missing, settings)
    if not missing:
        return
    before = service_requests(service)
    found, trusted = await confirm_missing(service, missing)
    result.confirm_requests = service_requests(service) - before
    result.found_by_id = len(found)
    gone = missing - found
    if found:
        note = (
            f"{len(found)} reservations missing from the id list were returned when asked for "
            f"by id (e.g. {sorted(found)[:SAMPLE]}) and were left live: the list read was "
            f"incomplete or had records without a readable id ({result.damaged}). Check the "
            "page size the service uses and the paging log."
        )
        log.warning(note)
        run.report.notes.append(note)
    if not trusted and gone:
        note = (
            f"{len(gone)} reservations look deleted, but a record of the id lookup had no "
            "readable reservationId, so none was tombstoned this time"
        )
        log.warning(note)
        run.report.notes.append(note)
        result.held_back = len(gone)
        gone = set()
    result.removed = {(i,) for i in sorted(gone)}
    if gone:
        log.info("reservation id reconciliation: %d reservations deleted at the source", len(gone))


async def revalidate_tombstones(
    run: ChangeRun, landing: Landing, refill: Callable[[list[int]], Awaitable[None]]
) -> dict[str, int]:
    """Ask the service again for reservations tombstoned in the last `RECHECK_DAYS`.

    A deletion believed on a bad day (a by-id answer with no content, a list read that missed
    records) would otherwise stay for good: the feed sends no event for a record that never
    went away. `refill(ids)` reads them by id into the sweep's reservations landing; those the
    service returns land again (new to the lake's current state, so the diff keeps them).
    """
    since = datetime.now(UTC) - timedelta(days=RECHECK_DAYS)
    recent = [k for k in run.lake.recent_tombstones("reservations", since) if k not in landing.seen]
    ids = sorted(int(k[0]) for k in recent)[:RECHECK_MAX]
    if ids:
        await refill(ids)
    back = [i for i in ids if (i,) in landing.seen]
    if back:
        note = (
            f"{len(back)} reservations tombstoned in the last {RECHECK_DAYS} days were returned "
            f"by the service when asked again (e.g. {back[:SAMPLE]}) and are live again: a "
            "deletion had been believed on a bad answer."
        )
        log.warning(note)
        run.report.notes.append(note)
    return {"asked": len(ids), "back": len(back)}


def tombstone_into(landing: Landing, result: IdReconcile) -> set[tuple[int]]:
    """Add the removed reservations to the run's reservations landing as tombstones.

    An id the same landing holds a fresh record of (it came back between the two reads) is
    not tombstoned and no longer counts as removed.
    """
    back = {k for k in result.removed if k in landing.seen}
    if back:
        result.removed -= back
        log.info("%d reservations missing from the id list are back; not removed", len(back))
    landing.add_tombstones(sorted(result.removed), source=LIST_PATH)
    return result.removed


def record(run: ChangeRun, result: IdReconcile) -> None:
    """After the tombstones committed: the report's `reservation_ids` entry and, for a complete
    run, the state `every_days` counts from."""
    run.report.diffs["reservation_ids"] = result.summary()
    if not result.ran:
        return
    today = run.settings.business_date
    run.lake.write_state(
        RECONCILE_STATE,
        run.batch_id,
        {
            "business_date": today.isoformat(),
            "lake_ids": result.lake_ids,
            "service_ids": result.service_ids,
            "removed": len(result.removed),
            "requests": result.list_requests + result.confirm_requests,
            "batch_id": run.batch_id,
        },
    )
