"""Lake parts as written (dictionary encoding, chunks) and the duplicate-key check's reads."""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lake import parts
from lake.compaction import compact
from lake.parts import SMALL_CHUNK_ROWS, write_part
from lake.store import Lake
from lake.tables import TABLES
from tests.assets.test_lake import B1, B2, B3, _current, _rows, _write


def test_duplicate_keys_of_a_healthy_lake_read_the_keys_once(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key twice in one batch: each pass answers 0 from the first read of the keys, without
    the second (the latest batch of each key twice found), which here would fail."""
    _write(lake, "companies", B1, "full", [{"company_id": i} for i in (1, 2, 3)])
    _write(lake, "companies", B2, "delta", [{"company_id": i} for i in (2, 3, 4)])
    monkeypatch.setattr(
        "lake.store.duplicate_keys_sql", lambda *a: "select error('read' || len($files))"
    )
    for pass_rows in (4_000_000, 2):
        monkeypatch.setattr("lake.store.DUPLICATE_PASS_ROWS", pass_rows)
        assert lake.duplicate_keys("companies") == 0
    _write(lake, "companies", B3, "delta", [{"company_id": 5}, {"company_id": 5}])
    monkeypatch.setattr("lake.store.DUPLICATE_PASS_ROWS", 4_000_000)
    with pytest.raises(duckdb.Error, match="read3"):
        lake.duplicate_keys("companies")


def test_parts_dictionary_encode_text_only(lake: Lake) -> None:
    """Parts (and their rewrite by compaction) dictionary-encode text, not ids, amounts, dates
    or timestamps (cheaper to write, the files ~4 % larger); readers get the same schema and
    rows."""
    _write(lake, "companies", B1, "full", [{"company_id": 1, "name": "a"}, {"company_id": 2}])
    _write(lake, "companies", B2, "delta", [{"company_id": 1, "name": "b", "code": "c"}])
    expected = lake.current("companies").sort_by("company_id")
    schema = TABLES["companies"].arrow_schema()
    text = {f.name for f in schema if f.type == pa.string()}
    assert {"name", "_batch_id"} <= text and "company_id" not in text
    assert expected.num_rows == 2
    for path in [*lake.files("companies"), lake.table_dir("companies") / "compacted"]:
        if path.name == "compacted":
            assert compact(lake, "companies").rows == 2
            [path] = lake.files("companies")
        assert pq.read_schema(path).equals(schema)
        chunks = pq.ParquetFile(path).metadata.row_group(0)
        for i in range(chunks.num_columns):
            column = chunks.column(i)
            dictionary = any("DICTIONARY" in e for e in column.encodings)
            assert dictionary == (column.path_in_schema in text), column.path_in_schema
    assert lake.current("companies").sort_by("company_id").equals(expected)


def test_parts_of_small_pages_are_written_as_one_chunk(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages averaging fewer than `SMALL_CHUNK_ROWS` rows reach the Parquet writer as one chunk a
    column (its cost is per chunk); larger pages as they came. The rows are the same."""
    written: list[int] = []

    def spy(data: pa.Table, path: os.PathLike[str]) -> None:
        written.append(data.column(0).num_chunks)
        write_part(data, path)

    monkeypatch.setattr(parts, "write_part", spy)
    big = SMALL_CHUNK_ROWS + 1
    for batch, sizes in ((B1, [1, 2, 3]), (B2, [big, big])):
        writer = lake.writer(TABLES["companies"], batch, flush_rows=sum(sizes))
        ids = iter(range(1, 1000))
        for n in sizes:
            writer.add(
                _rows("companies", batch, "delta", [{"company_id": next(ids)} for _ in range(n)])
            )
        writer.commit()
    assert written == [1, 2]
    assert sorted(_current(lake, "companies", "company_id", "_batch_id")) == list(
        range(1, 2 * big + 1)
    )
