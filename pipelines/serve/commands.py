"""What `reservoir serve` and `reservoir export` do, below the CLI's argument parsing."""

from __future__ import annotations

import sys
from pathlib import Path

import uvicorn

from pipelines.dashboard import open_warehouse
from pipelines.serve.app import create_app
from pipelines.serve.feed import FORMATS, encode, metric_records, slice_records
from warehouse.semantic import SOURCES
from warehouse.semantic_query import FeedError, Slice

DEFAULT_HOST = "127.0.0.1"  # local by default: the page has no login
DEFAULT_PORT = 8050


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def serve(warehouse: Path, *, host: str, port: int) -> None:
    if host not in LOOPBACK:
        print(
            f"warning: listening on {host}: the page and the feed have no login; anyone who can "
            "reach this address reads the figures (put a proxy with authentication in front)",
            file=sys.stderr,
            flush=True,
        )
    print(
        f"serving {warehouse} read-only on http://{host}:{port}/ (the feed: /api/metrics); "
        "Ctrl-C stops",
        flush=True,
    )
    uvicorn.run(create_app(warehouse), host=host, port=port, log_level="warning")


def export(
    warehouse: Path,
    name: str,
    *,
    by: list[str],
    where: list[str],
    fmt: str,
    out: Path | None,
) -> int:
    """Write metric `name` by `by` (or the slice of source mart `name`) filtered by `where`
    (KEY=VALUE, as the feed's query parameters) as `fmt` to `out` or stdout; raises FeedError."""
    if fmt not in FORMATS:
        raise FeedError(f"--format is one of {', '.join(FORMATS)}")
    pairs = []
    for item in where:
        key, sep, value = item.partition("=")
        if not sep:
            raise FeedError(f"--where takes KEY=VALUE (as from=2026-01-01), not {item!r}")
        pairs.append((key.strip(), value.strip()))
    where_slice = Slice.parse(pairs)
    con = open_warehouse(warehouse)
    try:
        if name in SOURCES:
            records = slice_records(con, name, where_slice)
        else:
            _answer, records = metric_records(
                con, name, [b for part in by for b in part.split(",") if b], where_slice
            )
    finally:
        con.close()
    body, _media = encode(records, fmt)
    if out is None:
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()
    else:
        out.write_bytes(body)
    return len(records)
