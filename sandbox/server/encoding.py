"""How a request serves a record (`View`): its dict for the decode path, its bytes for the cache."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import orjson

from sandbox.protocol import Record


@dataclass(frozen=True)
class View:
    """How one request serves a record: `build` gives the record as served (the decode path,
    used by faults that damage records), `encode` its JSON bytes; `variant` names the cache
    namespace (two views with the same variant must encode a record identically)."""

    variant: str
    build: Callable[[Record], Record]
    encode: Callable[[Record], bytes]
    encode_many: Callable[[Sequence[Record]], Sequence[bytes]] | None = None  # a page at once


def _identity(record: Record) -> Record:
    return record


def _encode_plain(records: Sequence[Record]) -> Sequence[bytes]:
    """`[orjson.dumps(r) for r in records]`; a lazy page of frozen records is encoded from the
    world's columns without building dicts (same bytes)."""
    encode = getattr(records, "encode", None)
    encoded = encode() if encode is not None else None
    if encoded is not None:
        return encoded
    return [orjson.dumps(record) for record in records]


def plain_view(collection: str, *, from_columns: bool = True) -> View:
    """A record served as it is; `from_columns`: pages of frozen records are encoded straight
    from the world's columns (else each record is rendered and given to orjson)."""
    return View(collection, _identity, orjson.dumps, _encode_plain if from_columns else None)
