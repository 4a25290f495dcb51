"""The metrics feed over HTTP: definitions, any metric by allowed dimensions, mart slices.

Answers are JSON (money as exact decimal strings, dates as ISO), CSV or Parquet. A request the
feed cannot answer (unknown metric, dimension or parameter, a malformed value, a huge range)
gets a 400 whose JSON `error` says what is allowed; no text of the request reaches SQL.
"""

from __future__ import annotations

import csv
import io
from datetime import date
from decimal import Decimal
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from warehouse.semantic import definitions, metric_definition
from warehouse.semantic_query import (
    Answer,
    FeedError,
    Slice,
    export_slice,
    labels,
    query_metric,
)

FORMATS = ("json", "csv", "parquet")
_RESERVED = ("by", "format")
_NAMED = ("park", "accommodation_type", "channel")


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


def _json(data: Any, status: int = 200) -> Response:
    return Response(
        orjson.dumps(data, default=_plain, option=orjson.OPT_PASSTHROUGH_DATETIME),
        status_code=status,
        media_type="application/json",
    )


def error(message: str, status: int = 400) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def _format(request: Request) -> str:
    fmt = request.query_params.get("format", "json")
    if fmt not in FORMATS:
        raise FeedError(f"'format' is one of {', '.join(FORMATS)}, not {fmt[:20]!r}")
    return fmt


def _by(request: Request) -> list[str]:
    out: list[str] = []
    for raw in request.query_params.getlist("by"):
        out += [part.strip() for part in raw.split(",") if part.strip()]
    return out


def metrics_index() -> Response:
    return _json(definitions())


def _records(answer: Answer, names: dict[str, dict[Any, str]]) -> list[dict[str, Any]]:
    """Rows as records, with a `<dimension>_name` beside every id dimension."""
    out = []
    for row in answer.rows:
        record = dict(zip(answer.columns, row, strict=True))
        for dim in _NAMED:
            if dim in record:
                record[f"{dim}_name"] = names[dim].get(record[dim])
        out.append(record)
    return out


def encode(records: list[dict[str, Any]], fmt: str) -> tuple[bytes, str]:
    """Records as `fmt` bytes and their media type (money exact in all three)."""
    if fmt == "csv":
        buf = io.StringIO()
        if records:
            writer = csv.DictWriter(buf, fieldnames=list(records[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows({k: _plain(v) for k, v in r.items()} for r in records)
        return buf.getvalue().encode(), "text/csv; charset=utf-8"
    if fmt == "parquet":
        sink = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(records), sink)
        return sink.getvalue(), "application/vnd.apache.parquet"
    return orjson.dumps(records, default=_plain), "application/json"


def _download(records: list[dict[str, Any]], fmt: str, name: str) -> Response:
    body, media = encode(records, fmt)
    return Response(
        body,
        media_type=media,
        headers={"content-disposition": f'attachment; filename="{name}.{fmt}"'},
    )


def metric_records(
    con: duckdb.DuckDBPyConnection, name: str, by: list[str], where: Slice
) -> tuple[Answer, list[dict[str, Any]]]:
    answer = query_metric(con, name, by, where)
    return answer, _records(answer, labels(con))


def slice_records(
    con: duckdb.DuckDBPyConnection, source: str, where: Slice
) -> list[dict[str, Any]]:
    return export_slice(con, source, where).to_pylist()


def metric_answer(con: duckdb.DuckDBPyConnection, request: Request, name: str) -> Response:
    fmt = _format(request)
    by = _by(request)
    where = Slice.parse(request.query_params.multi_items(), ignore=_RESERVED)
    answer, records = metric_records(con, name, by, where)
    if fmt != "json":
        return _download(records, fmt, name)
    return _json(
        {
            "metric": name,
            "definition": metric_definition(answer.metric),
            "by": [c for c in answer.columns if c not in _measure_columns(answer)],
            "filters": {
                "from": where.start,
                "to": where.end,
                **{k: list(v) for k, v in where.filters.items()},
            },
            "columns": answer.columns,
            "rows": records,
        }
    )


def _measure_columns(answer: Answer) -> set[str]:
    return {*answer.metric.measures, answer.metric.name}


def export(con: duckdb.DuckDBPyConnection, request: Request, source: str) -> Response:
    fmt = _format(request)
    where = Slice.parse(request.query_params.multi_items(), ignore=_RESERVED)
    records = slice_records(con, source, where)
    if fmt != "json":
        return _download(records, fmt, source)
    return _json({"source": source, "rows": records})
