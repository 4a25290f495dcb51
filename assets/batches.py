"""Several pages of one stream normalised in one read, each page's result as if read alone.

The client asks for 100 reservation details a page (`RESERVOIR_DETAILS_PAGE_SIZE`). Read one by
one, such a page pays a fixed cost (the read's call, ~80 column conversions, the tables) that
weighs as much as its records (docs/benchmarks.md, "Session 17: the normaliser at 100 a page").
Here the columnar read (`assets.columnar`) parses several pages' bodies as lines of NDJSON in
one call, the normaliser converts and checks their columns once, and the tables are cut back
into pages: each page's `Normalised` holds the same rows, in the same order, with the same
`_extracted_at` as `Normaliser.normalise` gives for that page alone, so the landing applies,
counts and writes pages as before.

Only a batch whose every value the read vouches for is taken: then no record is bad (nothing is
quarantined, no field is unknown), and each page's result is its tables alone. Any other batch
gives None, and its pages are normalised one by one (`Normaliser.normalise`), which decides
what is quarantined and why, as without batches.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from assets.columns import Normalised
from assets.normalise import COLUMNAR_MIN_RECORDS, Normaliser
from lake.schema import QUARANTINE_SCHEMA, TIMESTAMP

# Pages go to a worker together until they hold this many records (ten pages of the client's
# 100): measured in docs/benchmarks.md, "Session 17: the normaliser at 100 a page".
BATCH_RECORDS = 1000

Page = tuple[Sequence[dict[str, Any]], datetime]


def normalise_batch(normaliser: Normaliser, pages: Sequence[Page]) -> list[Normalised] | None:
    """Each page's result, read in one parse; None when the pages must be read one by one
    (fewer than two, fewer records than the columnar read pays off for, or a value the read
    cannot vouch for)."""
    counts = np.array([len(records) for records, _ in pages], dtype=np.int64)
    if len(pages) < 2:  # one page: `Normaliser.normalise` reads it the cheapest way
        return None
    reader = normaliser.columnar
    if reader is None or int(counts.sum()) < COLUMNAR_MIN_RECORDS:
        return None
    gc_on = gc.isenabled()
    gc.disable()
    try:
        read = reader.read_pages([records for records, _ in pages])
        if read is None:
            return None
        whole = normaliser.normalise_read(read, pages[0][1])
    finally:
        if gc_on:
            gc.enable()
    if whole is None or whole.quarantined or whole.partial or whole.lost or whole.unknown_fields:
        return None  # a read that vouched for every value has no bad record
    page_of = np.repeat(np.arange(len(pages), dtype=np.int64), counts)
    times = pa.array([at for _, at in pages], type=TIMESTAMP)
    cut: dict[str, tuple[pa.Table, np.ndarray]] = {}
    for name, table in whole.tables.items():
        rows = page_of if name == normaliser.spec.table.name else page_of[read.children[name][1]]
        cut[name] = _by_page(table, rows, times, len(pages))
    empty = QUARANTINE_SCHEMA.empty_table()
    return [
        Normalised(
            {
                name: table.slice(ends[i], ends[i + 1] - ends[i])
                for name, (table, ends) in cut.items()
            },
            empty,
            int(counts[i]),
            0,
        )
        for i in range(len(pages))
    ]


def _by_page(
    table: pa.Table, rows: np.ndarray, times: pa.Array, pages: int
) -> tuple[pa.Table, np.ndarray]:
    """`table`'s rows grouped by page (each row's page in `rows`), keeping their order within
    a page (a child table's rows come section by section over all pages), each with its page's
    `_extracted_at`; and where each page's rows start and end."""
    assert len(rows) == table.num_rows
    if len(rows) > 1 and bool(np.any(rows[1:] < rows[:-1])):
        order = np.argsort(rows, kind="stable")
        table, rows = table.take(pa.array(order)), rows[order]
    at = table.schema.get_field_index("_extracted_at")
    table = table.set_column(at, table.schema.field(at), times.take(pa.array(rows)))
    ends = np.searchsorted(rows, np.arange(pages + 1, dtype=np.int64), side="left")
    return table, ends
