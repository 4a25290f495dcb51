"""The table-format comparison's store and formats: the bucket on moto's S3 server (the tests'
`tests.s3_server`) and the objects under a prefix of it, and Delta Lake and Apache Iceberg behind
one small interface (append, replace a batch, read, live files), `FORMATS` by name
(bench/table_formats.py).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pyarrow as pa

BUCKET = "lake"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}
REGION = "us-east-1"


# -- the two formats, behind one small interface ---------------------------------------------


class Delta:
    name = "delta"

    def __init__(self, endpoint: str, work: Path) -> None:
        self.options = {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_REGION": REGION,
            "AWS_ALLOW_HTTP": "true",
            **CREDENTIALS,
        }

    def uri(self, table: str) -> str:
        return f"s3://{BUCKET}/delta/{table}"

    def append(self, table: str, data: pa.Table) -> None:
        from deltalake import write_deltalake

        write_deltalake(self.uri(table), data, mode="append", storage_options=self.options)

    def replace(self, table: str, data: pa.Table, writer: str) -> None:
        """One commit that replaces every row of `writer` (a rerun of the same batch)."""
        from deltalake import write_deltalake

        write_deltalake(
            self.uri(table),
            data,
            mode="overwrite",
            predicate=f"writer = '{writer}'",
            storage_options=self.options,
        )

    def reader(self, table: str) -> Any:
        from deltalake import DeltaTable

        return DeltaTable(self.uri(table), storage_options=self.options).to_pyarrow_dataset()

    def live_files(self, table: str) -> set[str]:
        from deltalake import DeltaTable

        uris = DeltaTable(self.uri(table), storage_options=self.options).file_uris()
        return {u.split(f"s3://{BUCKET}/", 1)[1] for u in uris}

    def prefix(self, table: str) -> str:
        return f"delta/{table}/"

    def conflict(self, exc: Exception) -> bool:
        return "Commit" in type(exc).__name__ or "conflict" in str(exc).lower()


class Iceberg:
    name = "iceberg"

    def __init__(self, endpoint: str, work: Path) -> None:
        self.props = {
            "uri": f"sqlite:///{work / 'iceberg-catalog.db'}",
            "warehouse": f"s3://{BUCKET}/iceberg",
            "s3.endpoint": endpoint,
            "s3.region": REGION,
            "s3.access-key-id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "s3.secret-access-key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        }
        self._catalog: Any = None

    @property
    def catalog(self) -> Any:
        if self._catalog is None:
            from pyiceberg.catalog.sql import SqlCatalog

            self._catalog = SqlCatalog("lake", **self.props)
            with contextlib.suppress(Exception):  # already there (another writer made it)
                self._catalog.create_namespace("lake")
        return self._catalog

    @staticmethod
    def _cast(data: pa.Table) -> pa.Table:
        # Iceberg stores microseconds; the lake writes milliseconds.
        fields = [
            pa.field(f.name, pa.timestamp("us", tz=f.type.tz), f.nullable)
            if pa.types.is_timestamp(f.type)
            else f
            for f in data.schema
        ]
        return data.cast(pa.schema(fields))

    def append(self, table: str, data: pa.Table) -> None:
        data = self._cast(data)
        tbl = self.catalog.create_table_if_not_exists(f"lake.{table}", schema=data.schema)
        tbl.append(data)

    def replace(self, table: str, data: pa.Table, writer: str) -> None:
        from pyiceberg.expressions import EqualTo

        tbl = self.catalog.create_table_if_not_exists(f"lake.{table}", schema=data.schema)
        tbl.overwrite(data, overwrite_filter=EqualTo("writer", writer))

    def reader(self, table: str) -> Any:
        return self.catalog.load_table(f"lake.{table}").scan().to_arrow_batch_reader()

    def live_files(self, table: str) -> set[str]:
        tbl = self.catalog.load_table(f"lake.{table}")
        return {t.file.file_path.split(f"s3://{BUCKET}/", 1)[1] for t in tbl.scan().plan_files()}

    def prefix(self, table: str) -> str:
        return f"iceberg/lake/{table}/"

    def conflict(self, exc: Exception) -> bool:
        return type(exc).__name__ in {"CommitFailedException", "OperationalError"}


FORMATS = {"delta": Delta, "iceberg": Iceberg}


def objects(endpoint: str, prefix: str) -> tuple[int, int]:
    """(objects, bytes) under a prefix of the bucket."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, **boto_credentials())
    count = size = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for obj in page.get("Contents", []):
            count += 1
            size += obj["Size"]
    return count, size


def data_objects(endpoint: str, prefix: str) -> set[str]:
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION, **boto_credentials())
    keys: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        keys |= {o["Key"] for o in page.get("Contents", []) if o["Key"].endswith(".parquet")}
    return keys


def boto_credentials() -> dict[str, str]:
    return {
        "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    }
