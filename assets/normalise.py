"""One page of source records -> typed Arrow tables (root + child tables) and quarantine rows.

Vectorised per page: each column is pulled out of the page with one comprehension and converted
in one Arrow/pandas call (`assets.convert`); per-record Python runs only for nested lists, the
unknown-field check and bad rows. The unit of quarantine is the source record: when a child row
is bad, the whole record (header and children) goes to quarantine, so a reservation is never
landed with a partial bill.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from assets.convert import _ARROW_ERRORS, CONVERTERS, WIRE_TYPES, from_wire
from assets.schema import QUARANTINE_SCHEMA, TIMESTAMP, Column, Table
from assets.specs import EndpointSpec, Section

Record = dict[str, Any]
# Unknown fields that look like personal data never land in `_extra` unless PII is allowed.
_PII_NAME = re.compile(
    r"name|mail|phone|mobile|address|street|zip|birth|iban|passport", re.IGNORECASE
)
PERSONAL_TABLES = frozenset(
    {"customers", "reservations", "reserved_resources", "bill_lines", "reservation_subjects"}
)
_RAW_LIMIT = 60


@dataclass
class Normalised:
    """The result of one page: typed tables, quarantine rows and drift counters."""

    tables: dict[str, pa.Table]
    quarantine: pa.Table
    records: int
    quarantined: int
    unknown_fields: Counter[str] = field(default_factory=Counter)
    dropped_pii_fields: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)


def _values(rows: Sequence[Record], path: str) -> list[Any]:
    if "." not in path:
        return [r.get(path) for r in rows]
    head, tail = path.split(".", 1)
    try:
        return [(r.get(head) or {}).get(tail) for r in rows]
    except AttributeError:  # the object is not an object: its fields are bad values
        return [v.get(tail) if isinstance(v := r.get(head), dict) else _Bad(v) for r in rows]


class _Bad:
    """Stands in for a value under a malformed object; no converter accepts it."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def __repr__(self) -> str:
        return repr(self.raw)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _RAW_LIMIT else text[: _RAW_LIMIT - 3] + "..."


def _wire_struct(rows: Sequence[Record], columns: Sequence[Column]) -> pa.StructArray | None:
    """The page's columns read in one Arrow conversion; None when any value does not fit."""
    fields: dict[str, pa.DataType | dict[str, pa.DataType]] = {}
    for c in columns:
        if c.kind not in WIRE_TYPES:
            continue
        if "." in c.source:
            head, tail = c.source.split(".", 1)
            sub = fields.setdefault(head, {})
            if isinstance(sub, dict):
                sub[tail] = WIRE_TYPES[c.kind]
        else:
            fields[c.source] = WIRE_TYPES[c.kind]
    struct = pa.struct(
        [
            pa.field(k, pa.struct(list(v.items())) if isinstance(v, dict) else v)
            for k, v in fields.items()
        ]
    )
    try:
        return pa.array(rows, type=struct)
    except _ARROW_ERRORS:
        return None


def _wire_field(struct: pa.StructArray, source: str) -> pa.Array:
    arr = struct
    for part in source.split("."):
        arr = arr.field(part)
    return arr


class _Converted:
    """Typed columns of one table plus, per row, the reasons it is bad."""

    def __init__(
        self,
        table: Table,
        rows: Sequence[Record],
        columns: Sequence[Column],
        preset: dict[str, pa.Array],
    ) -> None:
        self.arrays: dict[str, pa.Array] = {}
        self.bad = np.zeros(len(rows), dtype=bool)
        self.reasons: dict[int, list[str]] = defaultdict(list)
        self._table, self._rows = table, rows
        wanted = [c for c in columns if c.column not in preset]
        struct = _wire_struct(rows, wanted) if rows else None
        for c in columns:
            if c.column in preset:
                self.arrays[c.column] = preset[c.column]
                continue
            converted = None
            if struct is not None and c.kind in WIRE_TYPES:
                converted = from_wire(c.kind, _wire_field(struct, c.source))
            if converted is None:
                converted = CONVERTERS[c.kind](_values(rows, c.source))
            arr, bad, label = converted
            self._mark(c, bad, label)
            if c.codes is not None:
                allowed = pa.array(c.codes, type=arr.type)
                unknown = pc.and_(pc.is_valid(arr), pc.invert(pc.is_in(arr, value_set=allowed)))
                self._mark(c, unknown.to_numpy(zero_copy_only=False), "unknown code")
            if c.required and arr.null_count:
                missing = arr.is_null().to_numpy(zero_copy_only=False)
                if bad is not None:
                    missing &= ~bad
                self._mark(c, missing, "missing required value")
            self.arrays[c.column] = arr

    def _mark(self, c: Column, bad: np.ndarray | None, label: str) -> None:
        if bad is None or not bad.any():
            return
        self.bad |= bad
        raw = _values(self._rows, c.source)
        for i in np.flatnonzero(bad):
            self.reasons[int(i)].append(
                f"{self._table.name}.{c.column}: {label} ({_short(raw[i])})"
            )


class Normaliser:
    """Normalises pages of one endpoint spec for one batch."""

    def __init__(
        self,
        spec: EndpointSpec,
        *,
        batch_id: str,
        batch_kind: str = "full",
        include_pii: bool = False,
    ) -> None:
        self.spec, self.batch_id, self.batch_kind = spec, batch_id, batch_kind
        self.include_pii = include_pii
        self._by_table: dict[str, list[Section]] = defaultdict(list)
        for s in spec.sections:
            self._by_table[s.table.name].append(s)
        self._schemas = {t.name: t.arrow_schema(include_pii) for t in spec.tables}

    def normalise(self, records: Sequence[Record], extracted_at: datetime) -> Normalised:
        root = self.spec.table
        n = len(records)
        unknown: Counter[str] = Counter()
        dropped: Counter[str] = Counter()
        conv = _Converted(root, records, root.landed(self.include_pii), {})
        bad_record = conv.bad.copy()
        reasons: dict[int, list[str]] = defaultdict(list, conv.reasons)
        extras = {root.name: self._extras(root, records, unknown, dropped)}

        children: dict[str, tuple[_Converted, np.ndarray]] = {}
        for name, sections in self._by_table.items():
            child_table = sections[0].table
            rows, parent_idx, consts = self._child_rows(records, sections)
            preset = {
                col: pc.take(conv.arrays[pk], pa.array(parent_idx, type=pa.int64()))
                for col, pk in child_table.parent_key.items()
            }
            for wire, values in consts.items():
                preset_col = next(c for c in child_table.columns if c.source == wire)
                arr, _, _ = CONVERTERS[preset_col.kind](values)
                preset[preset_col.column] = arr
            child = _Converted(child_table, rows, child_table.landed(self.include_pii), preset)
            if child.bad.any():
                hit = parent_idx[child.bad]
                bad_record[hit] = True
                for i in np.flatnonzero(child.bad):
                    reasons[int(parent_idx[i])].extend(child.reasons[int(i)])
            children[name] = (child, parent_idx)
            extras[name] = self._extras(child_table, rows, unknown, dropped)

        keep = ~bad_record
        tables = {
            root.name: self._table(root.name, conv.arrays, extras[root.name], keep, extracted_at)
        }
        for name, (child, parent_idx) in children.items():
            tables[name] = self._table(
                name, child.arrays, extras[name], keep[parent_idx], extracted_at
            )
        quarantine = self._quarantine(records, bad_record, reasons, extracted_at)
        counted: Counter[str] = Counter()
        for i in np.flatnonzero(bad_record):
            for r in reasons[int(i)]:
                counted[r.split(" (", 1)[0]] += 1
        return Normalised(tables, quarantine, n, int(bad_record.sum()), unknown, dropped, counted)

    @staticmethod
    def _child_rows(
        records: Sequence[Record], sections: list[Section]
    ) -> tuple[list[Record], np.ndarray, dict[str, list[Any]]]:
        rows: list[Record] = []
        parents: list[np.ndarray] = []
        consts: dict[str, list[Any]] = defaultdict(list)
        for s in sections:
            lists = [r.get(s.field) for r in records]
            lists = [v if isinstance(v, list) else () for v in lists]
            lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
            rows.extend(chain.from_iterable(lists))
            parents.append(np.repeat(np.arange(len(records), dtype=np.int64), lengths))
            for wire, value in s.constants.items():
                consts[wire].extend([value] * int(lengths.sum()))
        # A non-object item in a list cannot be read; an empty object makes its keys bad.
        if not set(map(type, rows)) <= {dict}:
            rows = [r if isinstance(r, dict) else {} for r in rows]
        parent_idx = np.concatenate(parents) if parents else np.zeros(0, dtype=np.int64)
        return rows, parent_idx, dict(consts)

    def _extras(
        self, table: Table, rows: Sequence[Record], unknown: Counter[str], dropped: Counter[str]
    ) -> list[str | None]:
        """`_extra` JSON per row: fields the schema does not know (never silently dropped)."""
        known = table.known_fields()
        nested = {c.source.split(".")[0] for c in table.columns if "." in c.source}
        sub_known = {
            head: frozenset(
                c.source.split(".", 1)[1] for c in table.columns if c.source.startswith(head + ".")
            )
            for head in nested
        }
        out: list[str | None] = [None] * len(rows)
        if set(chain.from_iterable(rows)) <= known and not nested:
            return out  # the common case: no row has a field the schema does not know
        for i, r in enumerate(rows):
            extra: dict[str, Any] = {}
            if not r.keys() <= known:
                for k in r.keys() - known:
                    extra[k] = r[k]
            for head in nested:
                obj = r.get(head)
                if isinstance(obj, dict) and not obj.keys() <= sub_known[head]:
                    for k in obj.keys() - sub_known[head]:
                        extra[f"{head}.{k}"] = obj[k]
            if not extra:
                continue
            for k in list(extra):
                unknown[f"{table.name}.{k}"] += 1
                if not self.include_pii and table.name in PERSONAL_TABLES and _PII_NAME.search(k):
                    dropped[f"{table.name}.{k}"] += 1
                    del extra[k]
            if extra:
                out[i] = orjson.dumps(extra, default=str).decode()
        return out

    def _table(
        self,
        name: str,
        arrays: dict[str, pa.Array],
        extra: list[str | None],
        keep: np.ndarray,
        extracted_at: datetime,
    ) -> pa.Table:
        schema = self._schemas[name]
        n = len(extra)
        data = dict(arrays)
        data["_batch_id"] = pa.repeat(pa.scalar(self.batch_id), n)
        data["_batch_kind"] = pa.repeat(pa.scalar(self.batch_kind), n)
        data["_extracted_at"] = pa.repeat(pa.scalar(extracted_at, TIMESTAMP), n)
        data["_source"] = pa.repeat(pa.scalar(self.spec.source), n)
        data["_is_deleted"] = pa.repeat(pa.scalar(False), n)
        data["_extra"] = pa.array(extra, type=pa.string())
        table = pa.table({f.name: data[f.name] for f in schema}).cast(schema)
        return table if keep.all() else table.filter(pa.array(keep))

    def _quarantine(
        self,
        records: Sequence[Record],
        bad: np.ndarray,
        reasons: dict[int, list[str]],
        extracted_at: datetime,
    ) -> pa.Table:
        idx = np.flatnonzero(bad)
        rows = [
            {
                "_batch_id": self.batch_id,
                "_extracted_at": extracted_at,
                "_source": self.spec.source,
                "table": self.spec.table.name,
                "reason": "; ".join(reasons[int(i)]),
                "record": orjson.dumps(records[int(i)], default=str).decode(),
            }
            for i in idx
        ]
        return pa.Table.from_pylist(rows, schema=QUARANTINE_SCHEMA)
