"""Finance without events: journal reports with their entries, and cash clearances.

The finance tables have no event type, so runs re-read them by date, in the service's clock:

* each table's last successful read is recorded with the run state (`lake.state.FINANCE_STATE`:
  the business date of the run whose read committed, per table);
* an incremental run re-reads from that date minus `IngestSettings.finance_overlap` (2 days):
  cash clearances with `clearanceDate >=` it, and the entries of every journal report that is
  new or whose `periodTo >=` it (the report list itself is one small request, read in full).
  Runs days apart and records entered up to the overlap late are read again;
* the nightly sweep re-reads `sweep_finance_window` (35 days) before its business date, or from
  the last read when that is earlier, and reports the differences like the rest of the sweep;
* without a recorded read (a lake from before the marks existed) everything is read once.

Only what differs from the lake lands (a report together with all its entries: they are its
children in the lake).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol

from assets.diff import Diff, diff_against_lake, keyed_diff
from assets.landing import Landing, LandReport, keys_of
from assets.settings import IngestSettings, Pages
from lake.state import finance_reads, mark_finance_read
from lake.store import Lake

JOURNAL_TABLES = ("journal_reports", "journal_entries")
CLEARANCE_TABLES = ("cash_clearances",)
FINANCE_TABLES = (*JOURNAL_TABLES, *CLEARANCE_TABLES)


class Report(Protocol):
    diffs: dict[str, dict[str, Any]]


class FinanceRun(Protocol):
    """What reading finance uses of a run (`assets.run.ChangeRun`)."""

    lake: Lake
    service: Any
    settings: IngestSettings
    batch_id: str
    report: Report

    def landing(self, spec_name: str, kind: str = ...) -> Landing: ...

    async def _fill(self, landing: Landing, pages: Pages) -> None: ...

    def _done(self, key: str, landing: Landing, *, skipped: bool = ...) -> LandReport: ...


@dataclass(frozen=True)
class FinanceWindow:
    """From which date finance is re-read (None = everything)."""

    reports_since: date | None  # journal reports ending on or after it: entries re-read
    clearances_since: date | None  # cash clearances with clearanceDate on or after it

    def describe(self) -> dict[str, str | None]:
        return {
            "journal_reports_since": _iso(self.reports_since),
            "cash_clearances_since": _iso(self.clearances_since),
        }


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None


def _since(marks: dict[str, date], tables: Iterable[str], settings: IngestSettings) -> date | None:
    """The oldest last read of these tables minus the overlap; None if one was never read."""
    reads = [marks.get(t) for t in tables]
    if not reads or any(r is None for r in reads):
        return None
    return min(r for r in reads if r is not None) - settings.finance_overlap


def incremental_window(lake: Lake, settings: IngestSettings) -> FinanceWindow:
    """From each table's last successful read, minus the overlap."""
    marks = finance_reads(lake)
    return FinanceWindow(
        _since(marks, JOURNAL_TABLES, settings), _since(marks, CLEARANCE_TABLES, settings)
    )


def sweep_window(lake: Lake, settings: IngestSettings) -> FinanceWindow:
    """The sweep's longer window: `sweep_finance_window` back, or the incremental window when
    that starts earlier (a lake not read for longer)."""
    longest = settings.business_date - settings.sweep_finance_window
    inc = incremental_window(lake, settings)

    def earliest(since: date | None) -> date | None:
        return None if since is None else min(since, longest)

    return FinanceWindow(earliest(inc.reports_since), earliest(inc.clearances_since))


def record_full_reads(lake: Lake, batch_id: str, landed: dict[str, LandReport], day: date) -> None:
    """A full extract read the finance streams it landed in full: their reads are up to `day`."""
    tables = {name for name in landed if name in FINANCE_TABLES}  # a stream per finance table
    if tables:
        mark_finance_read(lake, batch_id, sorted(tables), day)


async def refresh_finance(
    run: FinanceRun, window: FinanceWindow, *, journal: bool = True, clearances: bool = True
) -> None:
    """Journal reports (all listed; entries of the new ones and those in the window) and cash
    clearances in the window; each table's read is recorded once its landing committed."""
    if journal:
        await _journal(run, window.reports_since)
    if clearances:
        await _clearances(run, window.clearances_since)


async def _journal(run: FinanceRun, since: date | None) -> None:
    from service.api import merge

    lake, service = run.lake, run.service
    reports = run.landing("journal_reports")
    await run._fill(reports, service.journal_reports())
    fresh = reports.fresh()
    known = set(lake.current_ids("journal_reports", "journal_report_id"))
    candidates: set[int] = set()
    for rid, period_to in zip(
        fresh.column("journal_report_id").to_pylist(),
        fresh.column("period_to").to_pylist(),
        strict=True,
    ):
        if rid not in known or since is None or period_to is None or period_to >= since:
            candidates.add(rid)
    entries = run.landing("journal_entries")
    if candidates:
        limit = max(2, service.client.limiter.limit * 2)
        await run._fill(
            entries,
            merge([service.journal_entries(r) for r in sorted(candidates)], maxsize=limit),
        )
    # Which candidate reports (row + entries) differ from the lake? Compared in DuckDB with
    # the lake's current rows of those reports only.
    keys = {(r,) for r in candidates}
    reports.keep_only(keys)
    ids = sorted(candidates)
    fresh = {"journal_reports": reports.fresh(), "journal_entries": entries.fresh()}
    current = {
        "journal_reports": lake.current_where("journal_reports", "journal_report_id", ids),
        "journal_entries": lake.current_where("journal_entries", "report_id", ids),
    }
    differing: set[tuple[int, ...]] = set()
    if candidates:
        tables = [reports.spec.table, entries.spec.table]
        differing_keys, _ = keyed_diff(tables, fresh, current)
        differing = set(keys_of(differing_keys, ["journal_report_id"]))
    lake_rep = set(keys_of(current["journal_reports"], ["journal_report_id"]))
    if reports.report.quarantined or entries.report.quarantined:
        differing = keys  # cannot trust the comparison; land what we have as a delta
    reports.keep_only(differing)
    entries.keep_only(differing, ["report_id"])
    diff = Diff(
        new={k for k in differing if k not in lake_rep},
        changed={k for k in differing if k in lake_rep},
    )
    run.report.diffs["journal_reports"] = {
        **diff.summary(),
        "since": _iso(since),
        "reports_compared": len(keys),
        "reports_differing": len(differing),
    }
    # Entries (children) before their reports (parents).
    run._done("journal_entries", entries, skipped=not differing)
    run._done("journal_reports", reports, skipped=not differing)
    mark_finance_read(lake, run.batch_id, JOURNAL_TABLES, run.settings.business_date)


async def _clearances(run: FinanceRun, since: date | None) -> None:
    from service.filters import F

    clear = run.landing("cash_clearances")
    params: dict[str, Any] = {}
    if since is not None:
        params["filter"] = [(F("clearanceDate") >= since).render()]
    await run._fill(
        clear,
        run.service.client.iter_keyset(
            "/cashreservations/clearance", "cashClearanceId", params=params or None
        ),
    )
    keys = set(keys_of(clear.fresh(), ["cash_clearance_id"]))
    diff = diff_against_lake(run.lake, clear, only_keys=keys)
    clear.keep_only(diff.differing)
    run.report.diffs["cash_clearances"] = {**diff.summary(), "since": _iso(since)}
    run._done("cash_clearances", clear, skipped=not diff.differing)
    mark_finance_read(run.lake, run.batch_id, CLEARANCE_TABLES, run.settings.business_date)
