"""Pre-encoded JSON for the sandbox's responses: records cached as bytes, pages joined from them.

A page of reservation details at size 1000 is ~6 MB of JSON; building the nested dicts and
encoding them costs ~50 ms of CPU per page, under the world's lock. Here every record is encoded
once (orjson) and kept as bytes per `(variant, key)`; a page is assembled by joining those bytes
into the envelope, which is byte-for-byte what `orjson.dumps(envelope(...))` gives (orjson is
compact and deterministic: a list is `[` + the items joined by `,` + `]`).

Validity: the world's records are its wire dicts and change in place, so the cache is only used
with a world that exposes an integer `generation` incremented (under its lock) by every mutation
(`sandbox.world.World` does). The cache is cleared when the generation moves. A world without one
(e.g. a test's hand-made world) is served without caching. All methods are called under
`world.lock`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from sandbox.query import SortOrder

Record = dict[str, Any]

DEFAULT_CACHE_BYTES = 1024 * 1024 * 1024  # 1 GiB of encoded records, then stop adding
_EMPTY_CONTENT = b'{"content":[]'


class RecordCache:
    """`(variant, key) -> bytes` for one world generation, bounded in total bytes."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.generation: int | None = None
        self.entries: dict[tuple[str, Any], bytes] = {}
        self.nbytes = 0
        self.hits = 0
        self.misses = 0
        self.invalidations = 0

    def sync(self, world: Any) -> bool:
        """Align with `world.generation` (clearing on change); False when caching is off."""
        generation = getattr(world, "generation", None)
        if self.max_bytes <= 0 or not isinstance(generation, int):
            return False
        if generation != self.generation:
            if self.entries:
                self.invalidations += 1
            self.entries = {}
            self.nbytes = 0
            self.generation = generation
        return True

    def encode_all(
        self,
        variant: str,
        records: Sequence[Record],
        pk: str,
        encode: Callable[[Record], bytes],
        *,
        enabled: bool,
        encode_many: Callable[[list[Record]], list[bytes]] | None = None,
    ) -> list[bytes]:
        """The JSON of each record, from the cache where present (misses are encoded and kept).

        `encode_many`, when given, encodes all the misses of a page in one call (a view whose
        records carry children renders them for the whole page at once)."""
        if not enabled:
            if encode_many is not None:
                return encode_many(list(records))
            return [encode(record) for record in records]
        entries = self.entries
        out: list[bytes | None] = []
        append = out.append
        missing: list[int] = []
        # A page that knows its keys (sandbox.query.LazyPage) is looked up without rendering.
        page_keys = getattr(records, "page_keys", None)
        keys = page_keys if page_keys is not None else [record.get(pk) for record in records]
        for key in keys:
            data = entries.get((variant, key))
            if data is None:
                missing.append(len(out))
            else:
                self.hits += 1
            append(data)
        if missing:
            subset = getattr(records, "subset", None)
            todo = subset(missing) if subset is not None else [records[i] for i in missing]
            fresh = encode_many(todo) if encode_many is not None else [encode(r) for r in todo]
            self.misses += len(missing)
            for i, record, data in zip(missing, todo, fresh, strict=True):
                key = (variant, record.get(pk))
                if key[1] is not None and self.nbytes + len(data) <= self.max_bytes:
                    # orjson.dumps returns bytes that keep its whole output buffer (>= 4 KiB
                    # allocated for a 400-byte record, measured with tracemalloc): a kept entry
                    # is copied to its own size, or the cache holds ~10x its byte count.
                    data = memoryview(data).tobytes()
                    entries[key] = data
                    self.nbytes += len(data)
                out[i] = data
        return out  # type: ignore[return-value]  # every miss was filled

    def describe(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "entries": len(self.entries),
            "bytes": self.nbytes,
            "maxBytes": self.max_bytes,
            "hits": self.hits,
            "misses": self.misses,
            "invalidations": self.invalidations,
        }


def page_bytes(
    parts: Sequence[bytes], *, page: int, size: int, total: int, orders: Sequence[SortOrder]
) -> bytes:
    """The page envelope of query.envelope() around already encoded records."""
    total_pages = -(-total // size)
    rest = orjson.dumps(
        {
            "content": [],
            "size": size,
            "number": page,
            "numberOfElements": len(parts),
            "totalElements": total,
            "totalPages": total_pages,
            "first": page == 0,
            "last": page >= total_pages - 1,
            "empty": not parts,
            "sort": [order.as_dict() for order in orders],
        }
    )
    return b'{"content":[' + b",".join(parts) + b"]" + rest[len(_EMPTY_CONTENT) :]


__all__ = ["DEFAULT_CACHE_BYTES", "RecordCache", "page_bytes"]
