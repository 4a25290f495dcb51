"""The reliability harness: drive a run against the sandbox, snapshot the lake, compare.

Everything a reliability test needs and nothing specific to one test:

- `Target`: where the service is and who we are (a sandbox handle, or env vars for a child
  process);
- `run_extraction`: THE driver. Every fault-matrix test runs the pipeline through this one
  function, so switching what "a run" means (the extraction half through `assets.extract.run_spec`,
  or the full `reservoir run`) is a change here only;
- `snapshot` / `compare`: every lake table's current state (the lake's own current-state reader,
  lineage columns ignored) against a reference, counting records checked, lost, duplicated,
  changed and unexpected;
- `quarantined`: what the quarantine holds, with reasons, for the `malformed` fault.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from assets.catalogue import SPECS
from assets.clock import resolve_business_date
from assets.endpoints import EndpointSpec
from assets.extract import run_spec
from assets.landing import LandReport
from assets.settings import IngestSettings
from lake.parts import new_batch_id
from lake.schema import LINEAGE
from lake.store import Lake
from lake.tables import TABLES

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
LINEAGE_COLUMNS = frozenset(f.name for f in LINEAGE)
# The pipeline's own defaults (pipelines/resources.py), so a direct run and `reservoir run`
# extract the same records and can be compared with each other.
HORIZON_DAYS = 90
# Sandbox `slow` answers after SLOW_SECONDS; the direct driver's client gives up after
# CLIENT_TIMEOUT, so `slow` exercises the timeout-and-retry path, not just patience.
SLOW_SECONDS = 1.5
CLIENT_TIMEOUT = 1.0

# Tables read per record of another table (fan-out): when that record is quarantined, its
# rows are never asked for. Child tables follow their parent through `parent_key` already.
FAN_OUT_FROM: dict[str, tuple[str, dict[str, str]]] = {
    "rates": ("accommodation_types", {"resource_id": "resource_id"}),
}

Key = tuple[Any, ...]
Row = tuple[Any, ...]


@dataclass(frozen=True)
class Target:
    """A service endpoint with credentials; `env()` hands it to a child process."""

    base_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str

    @classmethod
    def of(cls, handle: Any) -> Target:
        return cls(handle.base_url, handle.client_id, handle.client_secret, handle.scope)

    def env(self, data_dir: Path, **extra: str) -> dict[str, str]:
        """The process environment for `reservoir run` (or the drive script) against this target."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RESERVOIR_", "DAGSTER_"))}
        env.update(
            RESERVOIR_BASE_URL=self.base_url,
            RESERVOIR_CLIENT_ID=self.client_id,
            RESERVOIR_CLIENT_SECRET=self.client_secret,
            RESERVOIR_SCOPE=self.scope,
            RESERVOIR_DATA_DIR=str(data_dir),
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return env


# ------------------------------------------------------------------------------ the driver


@dataclass
class RunResult:
    """What one driven run did."""

    records: int = 0
    quarantined: int = 0
    requests: int = 0
    reports: dict[str, LandReport] = field(default_factory=dict)


def run_extraction(
    target: Target,
    data_dir: Path,
    *,
    specs: Sequence[EndpointSpec] = SPECS,
    today: date | None = None,
    quarantine_threshold: float = 1.0,
    timeout: float = CLIENT_TIMEOUT,
    on_spec: Callable[[str], None] | None = None,
    normalise_workers: int | None = None,
) -> RunResult:
    """One complete extraction into `data_dir/lake`, one batch, specs in dependency order.

    This is what each lake asset does (`assets.full.land_full` calls the same `run_spec`), without
    Dagster's bookkeeping, so the matrix stays fast. The quarantine threshold defaults to 1.0:
    the harness checks that every bad record is quarantined with a reason and the rest lands,
    not the threshold policy (tests/assets covers that).
    """
    from pipelines.resources import ReservationServiceResource
    from service.api import ReservationService

    # The client exactly as the pipeline's resource configures it (archived records shown,
    # page size, ...), only with the harness's shorter timeout.
    config = (
        ReservationServiceResource(
            base_url=target.base_url,
            client_id=target.client_id,
            client_secret=target.client_secret,
            scope=target.scope,
        )
        .service_config()
        .with_(timeout=timeout)
    )
    lake = Lake(Path(data_dir) / "lake")
    batch_id = new_batch_id()
    settings = IngestSettings(
        quarantine_threshold=quarantine_threshold,
        today=today,
        horizon_days=HORIZON_DAYS,
        normalise_workers=normalise_workers,
    )
    # The business date as the pipeline takes it: the service's (its Date header), not ours.
    settings, _ = resolve_business_date(lambda: ReservationService.connect(config), settings)
    result = RunResult()
    for spec in specs:
        if on_spec is not None:
            on_spec(spec.name)
        report = run_spec(
            spec,
            lake=lake,
            batch_id=batch_id,
            settings=settings,
            open_client=lambda: ReservationService.connect(config),
        )
        result.reports[spec.name] = report
        result.records += report.records
        result.quarantined += report.quarantined
        result.requests += report.requests
    return result


def run_cli(
    args: Sequence[str], env: Mapping[str, str], *, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """`reservoir <args>` in a child process, output captured."""
    return subprocess.run(
        [str(VENV_BIN / "reservoir"), *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )


def drive_command() -> list[str]:
    """The small driver script: `run_extraction` in a child process, settings from env vars."""
    return [sys.executable, "-m", "tests.reliability.drive"]


# ------------------------------------------------------------------------------ snapshots


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, float) and value != value:  # NaN equals itself for our purposes
        return "NaN"
    return value


def _scalar(typ: pa.DataType) -> bool:
    """Whether Arrow gives this type's values as Python values `_hashable` leaves as they are
    (no list, dict or float)."""
    return (
        pa.types.is_integer(typ)
        or pa.types.is_string(typ)
        or pa.types.is_large_string(typ)
        or pa.types.is_boolean(typ)
        or pa.types.is_decimal(typ)
        or pa.types.is_date(typ)
        or pa.types.is_timestamp(typ)
        or pa.types.is_null(typ)
    )


@dataclass
class TableState:
    """Current rows of one table by primary key (lineage columns dropped)."""

    columns: tuple[str, ...]
    rows: dict[Key, Row]
    duplicate_keys: int = 0  # keys with more than one current row, or ambiguous in the lake


Snapshot = dict[str, TableState]


def snapshot(data_dir: Path, tables: Iterable[str] = TABLES) -> Snapshot:
    """Every table's current state, read with the lake's own current-state reader."""
    lake = Lake(Path(data_dir) / "lake")
    out: Snapshot = {}
    for name in tables:
        spec = TABLES[name]
        current = lake.current(name)
        columns = tuple(c for c in current.column_names if c not in LINEAGE_COLUMNS)
        rows: dict[Key, Row] = {}
        dupes = 0
        # column by column: a scalar column's values are their own hashable form (`_hashable`
        # leaves them as they are), so only lists, structs and floats (NaN) are converted
        # (row dicts and a call per cell: ~1.5 against ~1.2 CPU s for a small world's lake)
        keys = [current.column(k).to_pylist() for k in spec.key]
        values = [
            data if _scalar(current.schema.field(c).type) else [_hashable(v) for v in data]
            for c in columns
            for data in (current.column(c).to_pylist(),)
        ]
        for key, row in zip(zip(*keys, strict=True), zip(*values, strict=True), strict=True):
            if key in rows:
                dupes += 1
            rows[key] = row
        out[name] = TableState(columns, rows, dupes + lake.duplicate_keys(name))
    return out


# ------------------------------------------------------------------------------ comparison


@dataclass
class Comparison:
    """A lake against its reference; empty lists mean nothing lost, duplicated or corrupted."""

    checked: int = 0
    lost: list[tuple[str, Key]] = field(default_factory=list)
    duplicated: list[tuple[str, int]] = field(default_factory=list)
    changed: list[tuple[str, Key]] = field(default_factory=list)
    unexpected: list[tuple[str, Key]] = field(default_factory=list)
    explained: int = 0  # reference records absent because their source record was quarantined
    transient: int = 0  # records created and deleted again while the run read (churn)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.changed or self.unexpected)

    def summary(self, limit: int = 5) -> str:
        parts = [f"checked {self.checked}"]
        for label in ("lost", "duplicated", "changed", "unexpected"):
            items = getattr(self, label)
            if items:
                by_table = Counter(t for t, _ in items)
                parts.append(f"{label} {len(items)} {dict(by_table)} e.g. {items[:limit]}")
        return "; ".join(parts)


def compare(
    got: Snapshot,
    before: Snapshot,
    after: Snapshot | None = None,
    *,
    quarantine: Quarantine | None = None,
) -> Comparison:
    """`got` against the fault-free reference.

    Without `after`, `got` must equal `before` exactly. With `after` (the world changed during
    the run, e.g. `churn`), a key may hold either version, keys present in both must be there,
    and keys that existed only before or only after may be absent (deleted, or inserted behind
    the reader). With `quarantine`, reference records whose source record was quarantined may
    be absent (and their child rows with them): "fault-free minus quarantined keys".
    """
    result = Comparison()
    absent: dict[str, set[Key]] = {}  # per table, reference keys missing from `got`
    for name, ref in before.items():
        spec = TABLES[name]
        state = got[name]
        if state.duplicate_keys:
            result.duplicated.append((name, state.duplicate_keys))
        later = after[name].rows if after is not None else ref.rows
        result.checked += len(ref.rows)
        newest = max(ref.rows, default=())
        for key, row in state.rows.items():
            if key in ref.rows or key in later:
                if row != ref.rows.get(key) and row != later.get(key):
                    result.changed.append((name, key))
            elif after is not None and ref.rows and key > newest:
                result.transient += 1  # inserted during the run and deleted again before `after`
            else:
                result.unexpected.append((name, key))
        missing = [k for k in set(ref.rows) & set(later) if k not in state.rows]
        absent[name] = set(missing)
        if quarantine is not None and missing:
            explained, missing = quarantine.explain(name, missing, ref)
            result.explained += len(explained)
            upstream, link = FAN_OUT_FROM.get(name, (spec.parent or "", spec.parent_key))
            gone = absent.get(upstream, set())
            if gone:  # rows of a record that is itself absent (quarantined upstream)
                idx = [ref.columns.index(c) for c in link]
                keep = []
                for k in missing:
                    row = ref.rows.get(k) or later[k]
                    if tuple(row[i] for i in idx) in gone:
                        result.explained += 1
                    else:
                        keep.append(k)
                missing = keep
        result.lost.extend((name, k) for k in sorted(missing, key=repr))
    return result


# ------------------------------------------------------------------------------ quarantine


@dataclass
class Quarantine:
    """The quarantine of a lake: per table the quarantined keys, null-key records, reasons."""

    keys: dict[str, set[Key]] = field(default_factory=dict)
    keyless: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    without_reason: int = 0
    records: int = 0
    reasons: Counter[str] = field(default_factory=Counter)

    def explain(
        self, table: str, missing: Sequence[Key], ref: TableState
    ) -> tuple[list[Key], list[Key]]:
        """Split missing keys into those a quarantined record accounts for and the rest.

        A damaged record whose primary key itself was nulled cannot name its key; it accounts
        for the one missing key whose reference row agrees with it on every intact id, number
        and text field.
        """
        known = self.keys.get(table, set())
        explained = [k for k in missing if k in known]
        rest = [k for k in missing if k not in known]
        fields = [
            (c.source, c.column, str if c.kind == "str" else int)
            for c in TABLES[table].landed(False)
            if c.kind in ("id", "int", "str") and "." not in c.source and c.codes is None
        ]
        rows = {k: dict(zip(ref.columns, ref.rows[k], strict=True)) for k in rest}
        # which missing keys each key-less record could stand for; then a maximum matching
        # (a greedy first fit can hand a record to a key another record needed)
        fits = [
            [
                k
                for k in rest
                if all(
                    not isinstance(record.get(src), kind)
                    or isinstance(record.get(src), bool)
                    or rows[k].get(col) == record.get(src)
                    for src, col, kind in fields
                )
            ]
            for record in self.keyless.get(table, [])
        ]
        owner: dict[Key, int] = {}

        def assign(i: int, seen: set[Key]) -> bool:
            for k in fits[i]:
                if k not in seen:
                    seen.add(k)
                    if k not in owner or assign(owner[k], seen):
                        owner[k] = i
                        return True
            return False

        for i in range(len(fits)):
            assign(i, set())
        explained += [k for k in rest if k in owner]
        return explained, [k for k in rest if k not in owner]


def _wire_key(table: str) -> list[tuple[str, str]]:
    spec = TABLES[table]
    by_column = {c.column: (c.source, c.kind) for c in spec.columns}
    return [by_column[k] for k in spec.key]


def _key_value(value: Any, kind: str) -> Any:
    """A wire key value as the lake holds it, or None when it is damaged."""
    if kind in ("id", "int"):
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if kind == "date":
        try:
            return date.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            return None
    return value


def quarantined(data_dir: Path) -> Quarantine:
    lake = Lake(Path(data_dir) / "lake")
    out = Quarantine()
    for name in TABLES:
        files = lake.quarantine_files(name)
        if not files:
            continue
        wire = _wire_key(name)
        for f in files:
            for q in pq.read_table(f).to_pylist():
                out.records += 1
                reason = (q.get("reason") or "").strip()
                if not reason:
                    out.without_reason += 1
                else:
                    out.reasons[reason.split(" (", 1)[0]] += 1
                record = json.loads(q["record"])
                values = [
                    _key_value(record.get(w), kind) if isinstance(record, dict) else None
                    for w, kind in wire
                ]
                if all(v is not None for v in values):
                    out.keys.setdefault(name, set()).add(tuple(values))
                else:
                    out.keyless.setdefault(name, []).append(
                        record if isinstance(record, dict) else {}
                    )
    return out


# ------------------------------------------------------------------------------ misc


def tmp_files(data_dir: Path) -> list[Path]:
    """Uncommitted part files (left by a killed writer; invisible to readers)."""
    return sorted(Path(data_dir).rglob("*.tmp"))
