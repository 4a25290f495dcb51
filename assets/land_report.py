"""What one landing wrote: the report every run mode gives per stream (`assets.landing`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class LandReport:
    """What one landing wrote: rows per table, tombstones, records and quarantine; the same
    report in every run mode."""

    spec: str
    batch_kind: str
    records: int = 0
    quarantined: int = 0
    tombstones: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    skipped: bool = False  # compared equal to the lake: nothing written
    requests: int = 0  # this stream's own requests (full extracts; 0 when only run-level)
    seconds: float = 0.0
    calls: int = 0
    normalise_workers: int = 0  # worker processes that normalised its pages (0: this process)
    reasons: dict[str, int] = field(default_factory=dict)
    dropped_pii_fields: dict[str, int] = field(default_factory=dict)
    bytes_written: dict[str, int] = field(default_factory=dict)
    files: dict[str, list[str]] = field(default_factory=dict)
    unknown_fields: dict[str, dict[str, int]] = field(default_factory=dict)
    quarantine_files: list[str] = field(default_factory=list)
    quarantine_allowed: int = 0  # quarantined records this landing could have had
    partial: int = 0  # records landed with some children kept at their last good version
    carried: dict[str, int] = field(default_factory=dict)  # last good rows kept, per table
    cursor: Any = None  # the largest `cursor_field` value seen (streams that keep one)
    notes: list[str] = field(default_factory=list)  # what the reading said (run report notes)

    @property
    def quarantine_rate(self) -> float:
        return self.quarantined / self.records if self.records else 0.0
