"""How fresh rows differ from the lake's current state (the sweep, reference lists, finance)."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from assets.landing import Landing, data_columns, keys_of
from lake.store import Lake


def _canon(value: Any) -> Any:
    if isinstance(value, float) and value != value:  # NaN
        return "NaN"
    if isinstance(value, list):
        return tuple(_canon(v) for v in value)
    return value


def fingerprints(
    table: pa.Table, group: Sequence[str], columns: Sequence[str] | None = None
) -> dict[tuple[Any, ...], str]:
    """Content hash per group of rows (non-lineage columns), order-independent within a group."""
    columns = list(columns or data_columns(table.schema))
    rows: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    if table.num_rows:
        data = {c: table.column(c).to_pylist() for c in columns}
        keys = keys_of(table, group)
        for i, key in enumerate(keys):
            rows[key].append(repr(tuple(_canon(data[c][i]) for c in columns)))
    return {
        k: hashlib.blake2b("\n".join(sorted(v)).encode(), digest_size=16).hexdigest()
        for k, v in rows.items()
    }


@dataclass
class Diff:
    """How fresh rows differ from the lake's current state, by root key."""

    new: set[tuple[Any, ...]] = field(default_factory=set)
    changed: set[tuple[Any, ...]] = field(default_factory=set)
    removed: set[tuple[Any, ...]] = field(default_factory=set)

    @property
    def differing(self) -> set[tuple[Any, ...]]:
        return self.new | self.changed

    @property
    def count(self) -> int:
        return len(self.new) + len(self.changed) + len(self.removed)

    def summary(self, sample: int = 10) -> dict[str, Any]:
        return {
            "new": len(self.new),
            "changed": len(self.changed),
            "removed": len(self.removed),
            "sample": [list(k) for k in sorted(self.differing | self.removed, key=repr)[:sample]],
        }


def diff_against_lake(
    lake: Lake,
    landing: Landing,
    *,
    only_keys: set[tuple[Any, ...]] | None = None,
    detect_removed: bool = False,
) -> Diff:
    """Compare a landing's buffered rows (root + children) with the lake's current state.

    `only_keys` limits the comparison to those root keys (e.g. reservations modified since a
    mark); `detect_removed` reports current keys the fresh list lacks (full lists only).
    """
    spec = landing.spec
    root = spec.table
    group = list(root.key)
    fresh_fp: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    lake_fp: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for table in spec.tables:
        if table is root:
            cols = group
        elif table.parent == root.name:
            cols = list(table.parent_key)
        else:
            continue
        fresh = landing.fresh(table.name)
        current = lake.current(table.name)
        data_cols = [c for c in data_columns(fresh.schema) if c in current.schema.names]
        if only_keys is not None and current.num_rows:
            mask = [k in only_keys for k in keys_of(current, cols)]
            current = current.filter(pa.array(mask, type=pa.bool_()))
        for k, v in fingerprints(fresh, cols, data_cols).items():
            fresh_fp[k].append(f"{table.name}:{v}")
        for k, v in fingerprints(current, cols, data_cols).items():
            lake_fp[k].append(f"{table.name}:{v}")
    out = Diff()
    root_fresh = set(keys_of(landing.fresh(), group))
    root_lake = set(keys_of(current_filtered(lake, root.name, group, only_keys), group))
    for key in root_fresh:
        if key not in root_lake:
            out.new.add(key)
        elif sorted(fresh_fp.get(key, [])) != sorted(lake_fp.get(key, [])):
            out.changed.add(key)
    if detect_removed:
        out.removed = root_lake - root_fresh
    return out


def current_filtered(
    lake: Lake, table: str, cols: Sequence[str], keys: set[tuple[Any, ...]] | None
) -> pa.Table:
    current = lake.current(table)
    if keys is None or not current.num_rows:
        return current
    mask = [k in keys for k in keys_of(current, cols)]
    return current.filter(pa.array(mask, type=pa.bool_()))
