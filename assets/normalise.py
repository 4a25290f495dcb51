"""One page of source records -> typed Arrow tables (root + child tables) and quarantine rows.

A page of a spec marked `columnar` (reservation details) of at least `COLUMNAR_MIN_RECORDS`
records is read by `pyarrow.json` first (`assets.columnar`: its JSON straight into Arrow
columns, no Python object per value); any other page, or one that read declines, by the typed
decoder (`assets.typed`: its JSON into msgspec Structs derived from the lake tables, then one
typed Arrow array per column, no dict per record); child tables are the flattened section lists
with each row's record index as the link to their record. A page the typed read refuses (an
unknown field, which lands in `_extra`; a value of another JSON type; a non-object record or
child item) or whose columns hold a bad value is decoded to dicts and read column by column
(`assets.dict_read`), each column through its converter, which decide what is bad; a property
test (tests/assets/test_normalise_paths.py) holds the two reads to the same result. Fields the
lake's schema does not know land in `_extra` (`assets.extras`).
The unit of quarantine is the source record: when a child row is bad, the whole record (header
and children) goes to quarantine, so a reservation is never landed with a partial bill. Its good
rows and the keys of its bad children are handed on (`Normalised.partial`, `.lost`): the
landing lands them only when every bad child can stay at its last good version
(`assets.lastgood`).
"""

from __future__ import annotations

import gc
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from assets.columnar import columnar_reader
from assets.columns import Converted, Normalised, Plan, Read, Record
from assets.convert import CONVERTERS
from assets.dict_read import ChildRead, dict_page
from assets.endpoints import EndpointSpec, Section
from assets.extras import extras
from assets.typed import TypedPage, TypedReader, shape_of
from lake.schema import QUARANTINE_SCHEMA, TIMESTAMP, Table

# The columnar read costs a fixed ~3 ms a page (its parse and ~80 column conversions): below
# ~600 records a page the typed decoder is cheaper. At the 100 reservation details a page the
# client asks for, the typed decoder normalises 22-25k documents/s per core against the columnar
# read's 17k, and a large run's two normaliser workers took 79 CPU s each with the columnar read
# against 52 before it (docs/benchmarks.md, "Session 15: the columnar read at 100 a page").
# With the typed read's C extension (`assets.compiled`) the typed read is the cheaper at every
# page size (20-23 against 31-34 us a document at 1000 a page: docs/benchmarks.md, session 20),
# so the columnar read serves large pages only where the extension is not built.
COLUMNAR_MIN_RECORDS = 750


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
        # each schema's column names, read once: iterating a schema makes a Field per column
        self._names = {name: tuple(schema.names) for name, schema in self._schemas.items()}
        self._plans = {
            spec.table.name: Plan.of(spec.table, include_pii, [s.field for s in spec.sections]),
            **{
                name: Plan.of(sections[0].table, include_pii)
                for name, sections in self._by_table.items()
            },
        }
        # Per child table: lake column -> (kind, section field -> fixed wire value).
        self._constants: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {}
        for name, sections in self._by_table.items():
            by_source = {c.source: c for c in sections[0].table.columns}
            consts: dict[str, tuple[str, dict[str, Any]]] = {}
            for s in sections:
                for wire, value in s.constants.items():
                    c = by_source[wire]
                    consts.setdefault(c.column, (c.kind, {}))[1][s.field] = value
            self._constants[name] = consts
        # Per child table and column: each section's fixed value as one typed array, made once.
        self._fixed_values = {
            (name, col): CONVERTERS[kind]([per_section.get(s.field) for s in sections])[0]
            for name, sections in self._by_table.items()
            for col, (kind, per_section) in self._constants[name].items()
        }
        preset = {
            name: frozenset(sections[0].table.parent_key) | frozenset(self._constants[name])
            for name, sections in self._by_table.items()
        }
        shapes = {name: shape_of(self._plans[name], preset[name], {}) for name in preset}
        self._reader = TypedReader(
            shape_of(
                self._plans[spec.table.name],
                frozenset(),
                {s.field: shapes[s.table.name].struct for s in spec.sections},
            ),
            {
                name: (shapes[name], tuple(s.field for s in sections))
                for name, sections in self._by_table.items()
            },
        )
        self._columnar = columnar_reader(spec, self._plans, preset) if spec.columnar else None
        self._children = {
            name: (self._plans[name], sections) for name, sections in self._by_table.items()
        }
        self._fixed_columns: dict[int, dict[str, pa.Array]] = {}

    def normalise(self, records: Sequence[Record], extracted_at: datetime) -> Normalised:
        """One page (a list of dicts, or an undecoded `LazyRecords`) -> tables and quarantine.

        The typed read first (`assets.typed`); a page it cannot vouch for is decoded to dicts
        and read column by column, whose converters decide what is quarantined.

        The cyclic GC is paused for the page (as in `service.lazy.loads`) and left as it was
        found: a page of details keeps ~6k section lists and ~60 column tuples alive until its
        tables are made, none of which can hold a cycle; with the GC back on after the read, a
        collection walked them on nearly every page (12 % of the CPU: docs/benchmarks.md,
        session 10)."""
        if not gc.isenabled():
            return self._normalise_page(records, extracted_at)
        gc.disable()
        try:
            return self._normalise_page(records, extracted_at)
        finally:
            gc.enable()

    def _normalise_page(self, records: Sequence[Record], extracted_at: datetime) -> Normalised:
        if len(records):
            typed = self._typed_page(records)
            if typed is not None:
                out = self._normalise(typed.root, typed.children, None, extracted_at)
                if out is not None:
                    return out
        records = list(records)  # decodes a `LazyRecords`
        root, children = dict_page(records, self._plans[self.spec.table.name], self._children)
        out = self._normalise(root, children, records, extracted_at)
        assert out is not None  # only a typed read gives up
        return out

    def _typed_page(self, records: Sequence[Record]) -> TypedPage | None:
        """The columnar read for a page of `COLUMNAR_MIN_RECORDS` or more when the typed read
        has no C extension, else (or when it declines) the typed decoder (tests switch both off
        to get the column-by-column reference)."""
        columnar = len(records) >= COLUMNAR_MIN_RECORDS and not self._reader.compiled
        page = self._columnar_page(records) if columnar else None
        return page if page is not None else self._reader.read(records)

    def _columnar_page(self, records: Sequence[Record]) -> TypedPage | None:
        """The columnar read (`assets.columnar`), where every column has an Arrow type."""
        return None if self._columnar is None else self._columnar.read(records)

    def _normalise(
        self,
        root_read: Read,
        child_reads: dict[str, ChildRead],
        records: list[Record] | None,
        extracted_at: datetime,
    ) -> Normalised | None:
        """The page's tables from its reads; None when a typed read (`records` None) holds a
        bad value: the caller then reads the page from dicts."""
        root = self.spec.table
        n = root_read.n
        unknown: Counter[str] = Counter()
        dropped: Counter[str] = Counter()
        plan = self._plans[root.name]
        conv = Converted(plan, n, root_read.raw, {}, root_read.wire)
        if records is None and conv.bad.any():
            return None
        bad_record = conv.bad.copy()
        reasons: dict[int, list[str]] = defaultdict(list, conv.reasons)
        pii = self.include_pii
        extra = {root.name: extras(plan, root_read.rows, pii, unknown, dropped)}

        children: dict[str, tuple[Converted, np.ndarray, int]] = {}
        for name, sections in self._by_table.items():
            child_plan = self._plans[name]
            child_table = child_plan.table
            read, parent_idx, lengths = child_reads[name]
            m = read.n
            take = pa.array(parent_idx, type=pa.int64())
            preset = {col: conv.arrays[pk].take(take) for col, pk in child_table.parent_key.items()}
            if self._constants[name]:
                which = pa.array(np.repeat(np.arange(len(sections), dtype=np.int64), lengths))
            for col in self._constants[name]:
                preset[col] = self._fixed_values[name, col].take(which)
            child = Converted(child_plan, m, read.raw, preset, read.wire)
            if child.bad.any():
                if records is None:
                    return None
                hit = parent_idx[child.bad]
                bad_record[hit] = True
                for i in np.flatnonzero(child.bad):
                    reasons[int(parent_idx[i])].extend(child.reasons[int(i)])
            children[name] = (child, parent_idx, m)
            extra[name] = extras(child_plan, read.rows, pii, unknown, dropped)

        keep = ~bad_record
        tables = {
            root.name: self._table(root.name, conv.arrays, extra[root.name], n, keep, extracted_at)
        }
        for name, (child, parent_idx, m) in children.items():
            tables[name] = self._table(
                name, child.arrays, extra[name], m, keep[parent_idx], extracted_at
            )
        # Records whose header is good and only some children are bad: their good rows, and
        # which children are bad, so that the landing can keep those at their last good version.
        partly = bad_record & ~conv.bad
        partial: dict[str, pa.Table] = {}
        lost: dict[str, pa.Table] = {}
        if partly.any():
            partial[root.name] = self._table(
                root.name, conv.arrays, extra[root.name], n, partly, extracted_at
            )
            for name, (child, parent_idx, m) in children.items():
                mine = partly[parent_idx]
                partial[name] = self._table(
                    name, child.arrays, extra[name], m, mine & ~child.bad, extracted_at
                )
                if (mine & child.bad).any():
                    lost[name] = _links(self._plans[name].table, child.arrays, mine & child.bad)
        if root.parent is not None and conv.bad.any():  # a child table read as its own stream
            lost[root.name] = _links(root, conv.arrays, conv.bad)
        quarantine = self._quarantine(records or [], bad_record, reasons, extracted_at)
        counted: Counter[str] = Counter()
        for i in np.flatnonzero(bad_record):
            for r in reasons[int(i)]:
                counted[r.split(" (", 1)[0]] += 1
        return Normalised(
            tables,
            quarantine,
            n,
            int(bad_record.sum()),
            unknown,
            dropped,
            counted,
            partial,
            lost,
        )

    def _table(
        self,
        name: str,
        arrays: dict[str, pa.Array],
        extra: list[str | None] | None,
        n: int,
        keep: np.ndarray,
        extracted_at: datetime,
    ) -> pa.Table:
        schema = self._schemas[name]
        data = dict(arrays)
        data.update(self._fixed(n))
        data["_extracted_at"] = pa.repeat(pa.scalar(extracted_at, TIMESTAMP), n)
        if extra is not None:
            data["_extra"] = pa.array(extra, type=pa.string())
        table = pa.Table.from_arrays([data[c] for c in self._names[name]], schema=schema)
        return table if keep.all() else table.filter(pa.array(keep))

    def _fixed(self, n: int) -> dict[str, pa.Array]:
        """The lineage columns every page of this batch has alike, for `n` rows, kept for the
        last few row counts (a page's records: the page size; child tables' rows vary)."""
        fixed = self._fixed_columns.get(n)
        if fixed is None:
            if len(self._fixed_columns) >= 8:  # the oldest goes: a few MB at most
                del self._fixed_columns[next(iter(self._fixed_columns))]
            fixed = self._fixed_columns[n] = {
                "_batch_id": pa.repeat(pa.scalar(self.batch_id), n),
                "_batch_kind": pa.repeat(pa.scalar(self.batch_kind), n),
                "_source": pa.repeat(pa.scalar(self.spec.source), n),
                "_is_deleted": pa.repeat(pa.scalar(False), n),
                "_extra": pa.nulls(n, pa.string()),
            }
        return fixed

    def _quarantine(
        self,
        records: Sequence[Record],
        bad: np.ndarray,
        reasons: dict[int, list[str]],
        extracted_at: datetime,
    ) -> pa.Table:
        idx = np.flatnonzero(bad)
        if not len(idx):
            return _NO_QUARANTINE
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


_NO_QUARANTINE = QUARANTINE_SCHEMA.empty_table()  # immutable, shared by every clean page


def _links(table: Table, arrays: dict[str, pa.Array], rows: np.ndarray) -> pa.Table:
    """Key and parent-link columns of some rows of a child table (null where unreadable)."""
    names = list(dict.fromkeys((*table.key, *table.parent_key)))
    mask = pa.array(rows)
    return pa.table({c: arrays[c].filter(mask) for c in names})
