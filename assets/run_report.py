"""What a run did (`RunReport`: per stream its landing, the plan, the cursor, requests, notes and
refused areas), for logs, Dagster metadata and the benchmark; and `pending_on_failure`, which
keeps what a failed run committed visible to the warehouse.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from assets.land_report import LandReport
from assets.refusal import Refusal
from lake.state import AsOf, mark_warehouse_pending
from lake.store import Lake

log = logging.getLogger(__name__)


@dataclass
class RunReport:
    """What a run did, for logs, Dagster metadata and the benchmark."""

    batch_id: str
    mode: str
    plan: dict[str, Any] = field(default_factory=dict)
    landed: dict[str, LandReport] = field(default_factory=dict)
    diffs: dict[str, dict[str, Any]] = field(default_factory=dict)
    cursor_before: int | None = None
    cursor_after: int | None = None
    requests: int = 0
    seconds: float = 0.0
    day_rolled: bool = False
    notes: list[str] = field(default_factory=list)
    as_of: AsOf | None = None  # the run's business date and where it came from (assets.clock)
    refused: dict[str, Refusal] = field(default_factory=dict)  # optional areas refused, by stream

    @property
    def tables(self) -> set[str]:
        """Lake tables that received rows (including tombstones)."""
        out: set[str] = set()
        for rep in self.landed.values():
            if rep.skipped:
                continue
            out.update(name for name, rows in rep.rows.items() if rows)
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "mode": self.mode,
            "cursor_before": self.cursor_before,
            "cursor_after": self.cursor_after,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "day_rolled": self.day_rolled,
            "as_of": self.as_of.business_date.isoformat() if self.as_of else None,
            "as_of_source": self.as_of.source if self.as_of else None,
            "plan": self.plan,
            "tables": sorted(self.tables),
            "rows": {
                k: {
                    "rows": v.rows,
                    "tombstones": v.tombstones,
                    "records": v.records,
                    "quarantined": v.quarantined,
                    "kind": v.batch_kind,
                }
                for k, v in self.landed.items()
                if not v.skipped
            },
            "diffs": self.diffs,
            "notes": self.notes,
            "refused": {name: r.as_dict() for name, r in self.refused.items()},
        }


@contextlib.contextmanager
def pending_on_failure(lake: Lake, batch_id: str, report: RunReport) -> Iterator[None]:
    """If the run fails, still mark the tables it committed before failing as pending: they are
    in the lake, and a rerun may find nothing left to land for them (the sweep's diff, a
    reconciled list), so nothing else would get their models rebuilt."""
    try:
        yield
    except BaseException:
        try:
            mark_warehouse_pending(lake, batch_id, report.tables)
        except Exception:  # never hide the run's own error behind this one
            log.exception("could not mark the tables landed before the failure as pending")
        raise
