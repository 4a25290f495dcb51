"""Lake files: batch ids and the part writer (temp files renamed only when a batch commits).

Layout (docs/contracts.md section 3): `lake/<table>/<batch_id>-<part:05d>.parquet`. Parts are
written as `<name>.parquet.tmp` and renamed only when the whole table batch commits, so a crash
leaves no half file and no half batch (a full batch that is only partly visible would make the
current-state rule drop every key it has not reached yet). Re-executing a run reuses its batch
id: the commit overwrites the same file names and removes any surplus parts of that batch, so the
re-run is idempotent.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_FLUSH_ROWS = 50_000
# Buffered tables (pages) averaging fewer rows than this are copied into one chunk a column
# before the write: Parquet's writer costs per chunk, and 50,000 rows in pages of 100 took ~1.3x
# the CPU of the same rows in one chunk; at ~1,000 rows a page the copy no longer pays
# (docs/benchmarks.md, session 21 lake21).
SMALL_CHUNK_ROWS = 250
STALE_TMP_SECONDS = 3600  # temp files older than this belong to a crashed writer
PART = re.compile(r"^(?P<batch>\d{8}T\d{6}Z-[0-9a-f]{8})-(?P<part>\d{5})\.parquet$")
# A quarantine file written by compaction; its footer names the files it replaced.
FOLDED = re.compile(r"^(?P<batch>\d{8}T\d{6}Z-[0-9a-f]{8})-folded\.parquet$")
SUPERSEDES_KEY = "reservoir.supersedes"


def dictionary_columns(schema: pa.Schema) -> list[str]:
    """The columns a lake part dictionary-encodes: text (Parquet has no dictionary of booleans).

    Dictionary encoding every column (pyarrow's default) costs ~1.5x the CPU of writing a part
    and shrinks the files little beyond what it does for text: the ids, amounts, dates and
    timestamps are mostly distinct within a part (docs/benchmarks.md, session 21 lake21: the
    medium lake's parts 1.31 -> 0.87 CPU s to write, 43.1 -> 44.8 MB). Readers see the same
    Arrow schema and rows; the encoding is each column chunk's own, in the Parquet footer."""
    return [
        f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
    ]


def write_part(data: pa.Table, path: Path) -> None:
    """Write one lake part (or quarantine part) as the lake's readers expect it."""
    pq.write_table(data, path, use_dictionary=dictionary_columns(data.schema))


def new_batch_id(at: datetime | None = None, token: str | None = None) -> str:
    """`YYYYMMDDTHHMMSSZ-<8 hex>`: sorts by time, unique per run."""
    at = (at or datetime.now(UTC)).astimezone(UTC)
    token = (token or secrets.token_hex(4))[:8].lower()
    return f"{at:%Y%m%dT%H%M%SZ}-{token}"


def replace_atomically(tmp: Path, final: Path) -> None:
    os.replace(tmp, final)


def fsync(path: Path) -> None:
    """Flush a file (or a folder's entries) to disk; a no-op where the OS refuses folders."""
    is_dir = path.is_dir()
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if is_dir else 0))
    try:
        os.fsync(fd)
    except OSError:
        if not is_dir:  # some filesystems do not fsync folders; a file must be on disk
            raise
    finally:
        os.close(fd)


def file_id(path: Path) -> tuple[str, int, int] | None:
    """(name, size, mtime_ns): which version of a file a folded quarantine file replaced.

    Size and mtime make a re-executed run's rewrite of the same name a new file (visible), not
    a leftover of the version that was folded.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (path.name, st.st_size, st.st_mtime_ns)


def superseded_by(folded: Path) -> set[tuple[str, int, int]]:
    raw = (pq.read_metadata(folded).metadata or {}).get(SUPERSEDES_KEY.encode())
    return {(str(n), int(size), int(mtime)) for n, size, mtime in json.loads(raw or b"[]")}


class PartWriter:
    """Buffers normalised rows of one table and writes them as parts of one batch."""

    def __init__(
        self,
        folder: Path,
        batch_id: str,
        schema: pa.Schema,
        *,
        flush_rows: int = DEFAULT_FLUSH_ROWS,
        publish: Callable[[PartWriter], list[Path]] | None = None,
        stage: str | None = None,
    ) -> None:
        self.folder, self.batch_id, self.schema = folder, batch_id, schema
        # `stage`: this writer stages parts for another writer of the batch, which adopts them
        # (`adopt`; a normaliser worker's, assets/worker_writes.py): its temp files are named
        # `<batch_id>-<stage>-<n>.parquet.tmp`, and it leaves the batch's other temp files be.
        self.stage = stage
        # Where a lake on object storage commits the batch (lake/remote.py) instead of the
        # renames below; it returns the local files that now hold the batch.
        self.publish = publish
        self.flush_rows = flush_rows
        self.rows = 0
        self.bytes_written = 0
        self.files: list[Path] = []
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        self._pending: list[Path] = []
        self.part_rows: list[int] = []  # rows of each staged part
        for stale in folder.glob(f"{batch_id}-*.parquet.tmp") if stage is None else ():
            stale.unlink(missing_ok=True)  # left by a crashed attempt of this same run

    @property
    def staged(self) -> list[Path]:
        """The part files written so far and not yet committed."""
        return list(self._pending)

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self._buffer.append(table)
        self._buffered += table.num_rows
        if self._buffered >= self.flush_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        data = pa.concat_tables(self._buffer).select(self.schema.names).cast(self.schema)
        if len(self._buffer) * SMALL_CHUNK_ROWS > data.num_rows:
            data = data.combine_chunks()  # see SMALL_CHUNK_ROWS
        self._buffer, self._buffered = [], 0
        self.folder.mkdir(parents=True, exist_ok=True)
        name = self.batch_id if self.stage is None else f"{self.batch_id}-{self.stage}"
        tmp = self.folder / f"{name}-{len(self._pending):05d}.parquet.tmp"
        write_part(data, tmp)
        self._pending.append(tmp)
        self.part_rows.append(data.num_rows)
        self.rows += data.num_rows

    def flush(self) -> None:
        """Write what is buffered as a part now (a staging writer's last part)."""
        self._flush()

    def adopt(self, tmp: Path, rows: int) -> None:
        """Take a part another writer of this batch staged (`stage`) as this writer's next one:
        it commits (renamed to this batch's next part name) or aborts with the others."""
        self._pending.append(tmp)
        self.part_rows.append(rows)
        self.rows += rows

    def columns(self, names: list[str]) -> pa.Table:
        """Some columns of every row added so far (written parts and the buffer)."""
        parts = [pq.read_table(tmp, columns=names) for tmp in self._pending]
        parts += [t.select(names) for t in self._buffer]
        schema = pa.schema([self.schema.field(n) for n in names])
        return pa.concat_tables([p.cast(schema) for p in parts]) if parts else schema.empty_table()

    def commit(self, kind: str | None = None) -> list[Path]:
        """Make the batch visible; `kind` rewrites `_batch_kind` (a full batch downgraded)."""
        self._flush()
        for tmp in self._pending if kind is not None else []:
            data = pq.read_table(tmp, schema=self.schema)
            idx = data.schema.get_field_index("_batch_kind")
            data = data.set_column(idx, "_batch_kind", pa.array([kind] * data.num_rows))
            write_part(data.cast(self.schema), tmp)
        if self.publish is not None:
            if self._pending:
                for path in self.publish(self):
                    self.files.append(path)
                    self.bytes_written += path.stat().st_size
            self.abort()
            return self.files
        for i, tmp in enumerate(self._pending):
            final = self.folder / f"{self.batch_id}-{i:05d}.parquet"
            replace_atomically(tmp, final)
            self.files.append(final)
            self.bytes_written += final.stat().st_size
        # Surplus parts of an earlier attempt of this batch would hold stale rows.
        for path in sorted(self.folder.glob(f"{self.batch_id}-*.parquet")):
            m = PART.match(path.name)
            if m and int(m["part"]) >= len(self._pending):
                path.unlink(missing_ok=True)
        self._pending, self.part_rows = [], []
        return self.files

    def abort(self) -> None:
        self._buffer, self._buffered = [], 0
        for tmp in self._pending:
            tmp.unlink(missing_ok=True)
        self._pending, self.part_rows = [], []


def sweep_tmp(folder: Path) -> None:
    """Delete temp files a crashed writer left behind (older than STALE_TMP_SECONDS)."""
    if not folder.is_dir():
        return
    cutoff = time.time() - STALE_TMP_SECONDS
    for tmp in folder.glob("*.tmp"):
        if tmp.stat().st_mtime < cutoff:
            tmp.unlink(missing_ok=True)
