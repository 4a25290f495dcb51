"""How many bad records a table may quarantine in one landing before nothing of it is committed.

A table fails only when its quarantined records exceed the larger of a share of its records
(`quarantine_threshold`, default 5 %) and an absolute floor (`quarantine_floor`, default 5
records): a share alone made one bad record of a 12-row reference list (8.3 %) fail the run,
while the floor alone would let a big table lose thousands. Both are settings: the lake run
config (`quarantine_max_share`, `quarantine_floor`), the environment
(`RESERVOIR_QUARANTINE_MAX_SHARE`, `RESERVOIR_QUARANTINE_FLOOR`, read when a run starts) and the
lake resource, in that order (`pipelines.lake_assets`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

SHARE_ENV = "RESERVOIR_QUARANTINE_MAX_SHARE"
FLOOR_ENV = "RESERVOIR_QUARANTINE_FLOOR"


class QuarantineRateExceeded(Exception):
    """Too many bad records in one table: the batch is not committed (quarantine is kept)."""


def allowed(records: int, share: float, floor: int) -> int:
    """Quarantined records a landing of `records` may have: max(share x records, floor)."""
    # The tolerance keeps 5 % of 400 at 20 (0.05 * 400 is 20.000000000000004 in floats).
    return max(int(floor), math.floor(share * records + 1e-9))


def exceeded_message(
    table: str,
    quarantined: int,
    records: int,
    share: float,
    floor: int,
    reasons: Mapping[str, int],
    folder: Path,
) -> str:
    """Which table, how many, why, where the evidence is and which setting to raise."""
    top = "; ".join(f"{reason} x{n}" for reason, n in list(reasons.items())[:5])
    rate = quarantined / records if records else 0.0
    return (
        f"table {table!r}: {quarantined} of {records} records ({rate:.1%}) failed validation, "
        f"more than the {allowed(records, share, floor)} allowed (the larger of {share:.1%} of "
        f"its records and {floor} records); nothing was committed for this table. "
        f"Most common reasons: {top}. Bad records with reasons: {folder}. If the source is "
        f"known to send these, raise {SHARE_ENV} (now {share:g}) or {FLOOR_ENV} (now {floor}), "
        "or the lake run config's quarantine_max_share / quarantine_floor."
    )
