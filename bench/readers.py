"""Benchmark: JSON readers of reservation detail pages, CPU us per document, alternated.

The normaliser's floor is its read: the page's JSON into typed columns. This measures, on the
same pages (`bench.normalise`'s synthetic details, or `--world small`), each reader alone and
the whole normaliser, in rounds that alternate the candidates (the host is shared: compare
within a round). `--batch N` hands a reader N pages at once (their bodies as NDJSON, or their
records decoded page by page), as a worker could if it got several pages a call.

  normalise        `Normaliser.normalise` per page, what ships (the typed decoder below
                   `COLUMNAR_MIN_RECORDS` records a page, the columnar read from it)
  normalise-big    `Normaliser.normalise` of pages of N x page size records (what one read of
                   N pages would cost, less the cutting back into pages)
  msgspec          the typed decoder's `msgspec` decode alone (Structs, strict)
  msgspec+columns  decode, then the Structs' columns as Arrow arrays (`TypedReader.read`; by
                   the C extension `assets._columns` where it is built)
  pyarrow          `pyarrow.json.read_json`, the columnar read's schema, N bodies as NDJSON
  duckdb           DuckDB `json_transform` of N bodies (yyjson) into Arrow: lenient, not a
                   candidate as it is ("12" reads as 12, 2.5 as 2, unknown fields vanish)
  polars           `polars.read_ndjson` with the schema, only when polars is importable
                   (not a dependency)

    python -m bench.readers --records 20000 --page-size 100 --batch 10 --rounds 3
"""

from __future__ import annotations

import argparse
import gc
import io
import statistics
import time
from collections.abc import Callable
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.json as pj

from assets.catalogue import SPECS
from assets.normalise import Normaliser
from bench.normalise import Pages, reservation_pool
from service.lazy import LazyRecords

Work = Callable[[], object]


def _duckdb_type(t: pa.DataType) -> Any:
    """The `json_transform` structure of an Arrow type."""
    if pa.types.is_struct(t):
        return {t.field(i).name: _duckdb_type(t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_list(t):
        return [_duckdb_type(t.value_type)]
    return {pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.string(): "VARCHAR"}.get(t, "BOOLEAN")


def candidates(
    normaliser: Normaliser, pages: list[Any], big: list[Any], batch: int
) -> dict[str, Work]:
    """Each candidate as a function that reads every page once."""
    bodies = [page.body() or b"" for page, _ in pages]
    groups = [b"\n".join(bodies[i : i + batch]) for i in range(0, len(bodies), batch)]
    reader = normaliser._reader  # the typed decoder (assets.typed)
    columnar = normaliser._columnar  # the columnar read (assets.columnar)
    assert columnar is not None
    struct = columnar.root.struct
    schema = pa.schema([pa.field("content", pa.list_(struct))])
    parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    con = duckdb.connect()
    con.execute("set threads = 1")
    shape = orjson.dumps({"content": [_duckdb_type(struct)]}).decode()
    query = f"select unnest(json_transform(b, '{shape}').content) as r from bodies"

    def normalise() -> None:
        for page, at in pages:
            normaliser.normalise(page, at)

    def normalise_big() -> None:
        for page, at in big:
            normaliser.normalise(page, at)

    def msgspec_decode() -> None:
        for body in bodies:
            reader._decoder.decode(body)

    def msgspec_columns() -> None:
        for page, _ in pages:
            reader.read(page)

    def pyarrow_read() -> None:
        for group in groups:
            options = pj.ReadOptions(use_threads=False, block_size=len(group) + 1)
            pj.read_json(pa.py_buffer(group), read_options=options, parse_options=parse)

    def duckdb_read() -> None:
        for i in range(0, len(bodies), batch):
            part = pa.table({"b": pa.array([b.decode() for b in bodies[i : i + batch]])})
            con.register("bodies", part)
            con.sql(query).to_arrow_table()
            con.unregister("bodies")

    work: dict[str, Work] = {
        "normalise": normalise,
        "normalise-big": normalise_big,
        "msgspec": msgspec_decode,
        "msgspec+columns": msgspec_columns,
        "pyarrow": pyarrow_read,
        "duckdb": duckdb_read,
    }
    try:
        import polars as pl  # type: ignore[import-not-found]
    except ImportError:
        return work
    row = pl.from_arrow(pa.table({"r": pa.array([], struct)})).schema["r"]
    row_schema = {f.name: f.dtype for f in row.fields}
    lines = [
        b"\n".join(
            orjson.dumps(r) for body in bodies[i : i + batch] for r in orjson.loads(body)["content"]
        )
        for i in range(0, len(bodies), batch)
    ]

    def polars_read() -> None:
        for text in lines:
            pl.read_ndjson(io.BytesIO(text), schema=row_schema).to_arrow()

    work["polars"] = polars_read
    return work


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=10, help="pages a reader gets at once")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--world", default=None, help="take templates from the sandbox world")
    args = parser.parse_args(argv)

    spec = next(s for s in SPECS if s.name == "reservations")
    pool = reservation_pool(args.world)
    key = spec.table.columns[0].source
    pages = list(Pages(pool, args.records, key, spec.source, page_size=args.page_size))
    big_size = args.page_size * args.batch
    big = list(Pages(pool, args.records, key, spec.source, page_size=big_size))
    assert all(isinstance(page, LazyRecords) for page, _ in pages)
    normaliser = Normaliser(spec, batch_id="bench-readers")
    size = sum(len(page.body() or b"") for page, _ in pages) / args.records
    work = candidates(normaliser, pages, big, args.batch)
    for run in work.values():  # warm: imports, caches, the first page's types
        run()
    print(
        f"{args.records:,} documents, {args.page_size} a page, {args.batch} pages a read "
        f"({size:,.0f} bytes of JSON a document)"
    )
    seen: dict[str, list[float]] = {name: [] for name in work}
    gc_on = gc.isenabled()
    for _ in range(args.rounds):
        for name, run in work.items():
            gc.disable()  # as the normaliser reads a page: Structs and lists hold no cycles
            started = time.process_time()
            run()
            seen[name].append((time.process_time() - started) / args.records * 1e6)
            if gc_on:
                gc.enable()
    for name, values in seen.items():
        runs = " / ".join(f"{v:.1f}" for v in values)
        print(f"{name:<16} median {statistics.median(values):6.1f} us a document ({runs})")


if __name__ == "__main__":
    main()
