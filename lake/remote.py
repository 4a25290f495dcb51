"""The lake's record on object storage: one Delta Lake table per lake table, quarantine and run
state under `RESERVOIR_LAKE_URL` (`s3://bucket/prefix`), with the local lake folder as its cache.

Why Delta Lake, measured against Iceberg: docs/table-formats.md. Every commit goes to the store
first, as one Delta commit (atomic: a kill leaves the table as it was, at most an orphan data
file). Then the local folder is brought to the table's current files. Everything above `lake/`
keeps reading local Parquet files: the warehouse, the current-state rule and the checks all stay
as they are. A re-executed run replaces its own batch (`overwrite` with a predicate on
`_batch_id`), so reruns stay idempotent. Another machine, or a data directory started empty,
gets the lake by `pull`.

Endpoint and credentials come from the standard variables (`AWS_ENDPOINT_URL`,
`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`), read when a store is opened, never at
import. Commits rely on S3's conditional writes (delta-rs 1.x), which AWS S3, MinIO and moto
provide.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

STATE_BATCH = "_state_batch_id"  # the batch id of a state row (the local file's name)
CACHE_MARK = ".delta-files"  # per cached folder: the store files it mirrors, one per line
# Files a commit replaced stay on the store this long before compaction's vacuum deletes them: a
# reader that pinned an older version (a warehouse build elsewhere) keeps its files meanwhile.
VACUUM_RETENTION_HOURS = 168
AWS_VARS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")


class LakeUrlError(ValueError):
    """RESERVOIR_LAKE_URL is not a URL this lake can use; the message says what would be."""


class DeltaRemote:
    """The lake's tables as Delta tables under `url`; `rel` names a table inside it
    (`reservations`, `_quarantine/reservations`, `_state/event_cursor`)."""

    def __init__(self, url: str, env: Mapping[str, str] | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc:
            raise LakeUrlError(
                f"RESERVOIR_LAKE_URL must be an s3://bucket/prefix URL, got {url!r}; unset it to "
                "keep the lake in the data directory"
            )
        self.url = url.rstrip("/")
        self.bucket, self.prefix = parts.netloc, parts.path.strip("/")
        env = os.environ if env is None else env
        self.options = {name: env[name] for name in AWS_VARS if env.get(name)}
        if env.get("AWS_DEFAULT_REGION") and "AWS_REGION" not in self.options:
            self.options["AWS_REGION"] = env["AWS_DEFAULT_REGION"]
        if self.options.get("AWS_ENDPOINT_URL", "").startswith("http://"):
            self.options["AWS_ALLOW_HTTP"] = "true"

    def uri(self, rel: str) -> str:
        return f"{self.url}/{rel}"

    def _table(self, rel: str) -> Any:
        from deltalake import DeltaTable

        if not DeltaTable.is_deltatable(self.uri(rel), storage_options=self.options):
            return None
        return DeltaTable(self.uri(rel), storage_options=self.options)

    # -- writing ---------------------------------------------------------------------------

    def commit_batch(self, rel: str, files: list[Path], batch_id: str, schema: pa.Schema) -> None:
        """One commit holding these part files as batch `batch_id`, replacing any rows of that
        batch an earlier attempt committed."""
        import pyarrow.dataset as ds  # here: with pandas ~0.35 s, for every importer of the lake
        from deltalake import write_deltalake

        # Streamed part by part: a large batch (13 M bill lines at large scale) never sits in
        # memory whole.
        parts = ds.dataset([str(f) for f in files], schema=schema, format="parquet")
        data = pa.RecordBatchReader.from_batches(schema, parts.to_batches())
        if self._table(rel) is None:
            write_deltalake(self.uri(rel), data, mode="append", storage_options=self.options)
            return
        write_deltalake(
            self.uri(rel),
            data,
            mode="overwrite",
            predicate=f"_batch_id = '{_literal(batch_id)}'",
            storage_options=self.options,
        )

    def replace_all(self, rel: str, file: Path) -> None:
        """One commit that makes `file` the table's only content (compaction)."""
        from deltalake import write_deltalake

        with pq.ParquetFile(file) as source:
            data = pa.RecordBatchReader.from_batches(source.schema_arrow, source.iter_batches())
            write_deltalake(self.uri(rel), data, mode="overwrite", storage_options=self.options)

    def vacuum(self, rel: str, *, retention_hours: int = VACUUM_RETENTION_HOURS) -> int:
        """Delete the files no version younger than the retention uses (and orphans of killed
        commits that old); returns how many."""
        table = self._table(rel)
        if table is None:
            return 0
        removed = table.vacuum(
            retention_hours=retention_hours,
            dry_run=False,
            enforce_retention_duration=retention_hours >= VACUUM_RETENTION_HOURS,
        )
        return len(removed)

    def commit_state(self, name: str, batch_id: str, values: dict[str, Any]) -> None:
        from deltalake import write_deltalake

        row = pa.Table.from_pylist([{**values, STATE_BATCH: batch_id}])
        write_deltalake(
            self.uri(f"_state/{name}"),
            row,
            mode="append",
            schema_mode="merge",
            storage_options=self.options,
        )

    def prune_state(self, name: str, keep: int) -> int:
        """Delete all but the newest `keep` rows of a state on the store; returns how many."""
        table = self._table(f"_state/{name}")
        if table is None:
            return 0
        batches = sorted(set(table.to_pyarrow_table(columns=[STATE_BATCH]).column(0).to_pylist()))
        if len(batches) <= keep:
            return 0
        oldest_kept = _literal(batches[-keep])
        metrics = table.delete(f"{STATE_BATCH} < '{oldest_kept}'")
        return int(metrics.get("num_deleted_rows", 0))

    # -- the local cache --------------------------------------------------------------------

    def sync(self, rel: str, folder: Path) -> list[Path]:
        """Make `folder` hold exactly the table's current data files; returns the new ones."""
        table = self._table(rel)
        if table is None:
            return []
        wanted = {uri.rsplit("/", 1)[1]: uri for uri in table.file_uris()}
        folder.mkdir(parents=True, exist_ok=True)
        mark = folder / CACHE_MARK
        ours = set(mark.read_text().split()) if mark.exists() else set()
        fs = self.filesystem()
        added: list[Path] = []
        for name, uri in sorted(wanted.items()):
            local = folder / name
            if local.exists():
                continue
            tmp = folder / f".{name}.tmp"
            with fs.open_input_stream(uri.removeprefix("s3://")) as src, open(tmp, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            tmp.replace(local)
            added.append(local)
        # Files of ours the table no longer holds (a rerun replaced them, compaction folded them).
        for name in ours - set(wanted):
            (folder / name).unlink(missing_ok=True)
        tmp_mark = folder / f"{CACHE_MARK}.tmp"
        tmp_mark.write_text("\n".join(sorted(wanted)))
        tmp_mark.replace(mark)
        return added

    def sync_state(self, name: str, folder: Path) -> None:
        """The newest row of a state as `<batch_id>.parquet` (the local rule: newest wins)."""
        table = self._table(f"_state/{name}")
        if table is None:
            return
        rows = table.to_pyarrow_table()
        if rows.num_rows == 0:
            return
        newest = max(rows.column(STATE_BATCH).to_pylist())
        local = folder / f"{newest}.parquet"
        if local.exists():
            return
        folder.mkdir(parents=True, exist_ok=True)
        row = [r for r in rows.to_pylist() if r[STATE_BATCH] == newest][-1]
        row.pop(STATE_BATCH)
        row = {k: v for k, v in row.items() if v is not None}
        tmp = folder / f"{newest}.parquet.tmp"
        pq.write_table(pa.Table.from_pylist([row]), tmp)
        tmp.replace(local)

    def pull(self, root: Path) -> None:
        """Bring every table, quarantine and state of the store into the local lake `root`."""
        for rel in self.tables():
            if rel.startswith("_state/"):
                name = rel.split("/", 1)[1]
                self.sync_state(name, root / "_state" / name)
            else:
                self.sync(rel, root / rel)

    def tables(self) -> list[str]:
        """The Delta tables under the URL, as rels."""
        import pyarrow.fs as pafs

        fs = self.filesystem()
        base = f"{self.bucket}/{self.prefix}".rstrip("/")
        found: list[str] = []

        def children(path: str) -> list[str]:
            try:
                infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
            except FileNotFoundError:
                return []
            return [i.base_name for i in infos if i.type == pafs.FileType.Directory]

        for name in children(base):
            if name in {"_quarantine", "_state"}:
                found += [f"{name}/{child}" for child in children(f"{base}/{name}")]
            elif not name.startswith("_"):
                found.append(name)
        return sorted(found)

    def filesystem(self) -> Any:
        """pyarrow's S3 filesystem on the store's endpoint (listing and downloads)."""
        import pyarrow.fs as pafs

        endpoint = self.options.get("AWS_ENDPOINT_URL")
        kwargs: dict[str, Any] = {"region": self.options.get("AWS_REGION", "us-east-1")}
        if endpoint:
            parts = urlsplit(endpoint)
            kwargs["endpoint_override"] = parts.netloc
            kwargs["scheme"] = parts.scheme or "https"
        if self.options.get("AWS_ACCESS_KEY_ID"):
            kwargs["access_key"] = self.options["AWS_ACCESS_KEY_ID"]
            kwargs["secret_key"] = self.options.get("AWS_SECRET_ACCESS_KEY", "")
        return pafs.S3FileSystem(**kwargs)


_SAFE = re.compile(r"^[0-9A-Za-z_-]+$")


def _literal(batch_id: str) -> str:
    """A batch id inside a predicate: batch ids are `YYYYMMDDTHHMMSSZ-<hex>`, nothing else."""
    if not _SAFE.match(batch_id):
        raise ValueError(f"not a batch id: {batch_id!r}")
    return batch_id
