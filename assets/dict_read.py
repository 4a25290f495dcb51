"""The reference read of a page: its records as dicts, read column by column.

The normaliser's first reads (`assets.columnar`, `assets.typed`) decline a page they cannot
vouch for (an unknown field, a value of another JSON type, a non-object record or child item, a
bad value); that page is decoded to dicts and read here. Each column is the list of its Python
values (`map(itemgetter)` when the page's rows share one key set, else `dict.get`; dotted names
for nested objects), which the converters (`assets.columns.Converted`) then type and judge; a
property test (tests/assets/test_normalise_paths.py) holds the reads to the same result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np

from assets.columns import Columns, Plan, Read, Record, read_uniform, sub_values
from assets.endpoints import Section

ChildRead = tuple[Read, np.ndarray, list[int]]  # the read, each row's record, rows per section


def dict_page(
    records: list[Record],
    root: Plan,
    children: Mapping[str, tuple[Plan, list[Section]]],
) -> tuple[Read, dict[str, ChildRead]]:
    """The page read from dicts, column by column: the root table's read (`root` its plan) and
    per child table (its plan and the sections it is read from) its read."""
    n = len(records)
    values = read_columns(root, records)
    root_read = Read(n, values.__getitem__, {}, records)
    child_reads: dict[str, ChildRead] = {}
    for name, (plan, sections) in children.items():
        rows, parent_idx, lengths = child_rows(values, sections, n)
        child_values = read_columns(plan, rows)
        child_reads[name] = (
            Read(len(rows), child_values.__getitem__, {}, rows),
            parent_idx,
            lengths,
        )
    return root_read, child_reads


def read_columns(plan: Plan, rows: Sequence[Any]) -> Columns:
    """Python values of every field the plan reads (dotted for nested objects)."""
    n = len(rows)
    missing: list[Any] = [None] * n
    uniform = read_uniform(rows, plan.known) if n else None
    if uniform is not None:
        values = {f: uniform.get(f, missing) for f in plan.fields}
    else:
        rows = [r if isinstance(r, dict) else {} for r in rows]
        values = {f: [r.get(f) for r in rows] for f in plan.fields}
    for source in plan.nested:
        head, tail = source.split(".", 1)
        objs = values[head] if head in values else [r.get(head) for r in rows]
        values[source] = sub_values(objs, tail)
    return values


def child_rows(
    values: Columns, sections: list[Section], n: int
) -> tuple[list[Any], np.ndarray, list[int]]:
    """Child rows of all sections (section by section), their record index, rows per section.

    A section that is not a list has no rows; a non-object item is read as an empty object
    (so its required fields are missing)."""
    rows: list[Any] = []
    parents: list[np.ndarray] = []
    totals: list[int] = []
    for s in sections:
        lists = values[s.field]
        lengths = np.fromiter(
            (len(v) if type(v) is list else 0 for v in lists), dtype=np.int64, count=n
        )
        total = int(lengths.sum())
        if total:
            rows.extend(chain.from_iterable(v for v in lists if type(v) is list))
            parents.append(np.repeat(np.arange(n, dtype=np.int64), lengths))
        totals.append(total)
    parent_idx = np.concatenate(parents) if parents else np.zeros(0, dtype=np.int64)
    return rows, parent_idx, totals
