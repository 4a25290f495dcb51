"""Pre-encoded JSON for the sandbox's responses: records cached as bytes, pages joined from them.

A page of reservation details at size 1000 is ~6 MB of JSON; building the nested dicts and
encoding them costs ~50 ms of CPU per page, under the world's lock. Here every record is encoded
once and kept as bytes per `(variant, key)`; a page is assembled by joining those bytes into the
envelope, which is byte-for-byte what `orjson.dumps(envelope(...))` gives (orjson is compact and
deterministic: a list is `[` + the items joined by `,` + `]`).

Read-ahead: a cold page of a keyset scan (`sandbox.query.LazyPage.following`) is encoded
together with the records that follow it in the scan, up to READ_AHEAD_RECORDS in one batch, as
long as the cache has room. The world's encoders work a column at a time, and a batch of a
thousand reservation details costs about half as much per record as a page of a hundred; the
next pages of the scan are then answered from the cache.

Bounded: entries are kept in the order they were encoded, in batches (one page's misses and
its read-ahead); when a batch does not fit, the oldest batches are dropped until it does. A full
read of a world larger than the cache therefore keeps reading ahead with a cache of any size
(the pages it already served are what goes), and its memory stays at `max_bytes`.

Validity: the world's records are its wire dicts and change in place, so the cache is only used
with a world that exposes an integer `generation` incremented (under its lock) by every mutation
(`sandbox.world.World` does). The cache is cleared when the generation moves. A world without one
(e.g. a test's hand-made world) is served without caching. All methods are called under
`world.lock`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import orjson

from sandbox.filters import SortOrder, sort_entry

Record = dict[str, Any]

DEFAULT_CACHE_BYTES = 1024 * 1024 * 1024  # 1 GiB of encoded records, then the oldest go
# For a sandbox read once (the embedded sandbox of `reservoir run`): room for the read-ahead
# batches of the lists read at once (a batch of 1,000 reservation details is ~6 MB), not for the
# read itself (~8 GB of JSON at large, which a second read would need to find warm).
READ_ONCE_CACHE_BYTES = 256 * 1024 * 1024
# A cold page of a keyset scan is encoded with the records that follow it in the scan, up to
# this many in one batch (the next pages of the scan are then answered from the cache).
READ_AHEAD_RECORDS = 1000
_GUESS_ENTRY_BYTES = 8192  # the size of an entry, before the cache holds any
_EMPTY_CONTENT = b'{"content":[]'


class RecordCache:
    """`(variant, key) -> bytes` for one world generation, bounded in total bytes."""

    def __init__(
        self, max_bytes: int = DEFAULT_CACHE_BYTES, read_ahead: int = READ_AHEAD_RECORDS
    ) -> None:
        self.max_bytes = max_bytes
        self.read_ahead = read_ahead
        self.generation: int | None = None
        # variant -> key -> bytes (no tuple per entry: they would all be tracked by the GC)
        self.entries: dict[str, dict[Any, bytes]] = {}
        self.nbytes = 0
        # what was added, oldest first: (variant, keys, their bytes), dropped whole when full
        self.batches: deque[tuple[str, list[Any], int]] = deque()
        self.hits = 0
        self.misses = 0  # records encoded (the page's misses and what was read ahead)
        self.read_ahead_records = 0
        self.invalidations = 0
        self.evicted = 0  # entries dropped to make room

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
            self.batches = deque()
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
        encode_many: Callable[[Sequence[Record]], Sequence[bytes]] | None = None,
        offload: Callable[[Sequence[Record]], Sequence[bytes] | None] | None = None,
    ) -> list[bytes]:
        """The JSON of each record, from the cache where present (misses are encoded and kept).

        `encode_many`, when given, encodes all the misses of a page in one call (a view whose
        records carry children renders them for the whole page at once; a page of frozen
        records is encoded from the columns). It gets the misses as a `LazyPage` when the page
        is one, so it may encode them without rendering dicts. `offload`, when given, is
        asked first to encode the misses elsewhere (sandbox.server.encode_pool; None: here); it
        may let the world's lock go while it waits, so the cache is only read after it."""
        if not enabled:
            if encode_many is not None:
                return list(encode_many(records))
            return [encode(record) for record in records]
        entries = self.entries.get(variant)
        if entries is None:
            entries = {}
        # A page that knows its keys (sandbox.query.LazyPage) is looked up without rendering.
        page_keys = getattr(records, "page_keys", None)
        keys = page_keys if page_keys is not None else [record.get(pk) for record in records]
        out: list[Any] = list(map(entries.get, keys))
        missing = [i for i, data in enumerate(out) if data is None]
        self.hits += len(out) - len(missing)
        if missing:
            subset = getattr(records, "subset", None)
            todo = subset(missing) if subset is not None else [records[i] for i in missing]
            joined = getattr(todo, "joined", None)  # a lazy page (not rendered yet)
            ahead = self._ahead(records, entries) if joined and encode_many else None
            if ahead is not None:
                todo = joined(ahead)  # type: ignore[misc]
                self.read_ahead_records += len(ahead)
            fresh = offload(todo) if offload is not None else None
            if fresh is None:
                fresh = encode_many(todo) if encode_many is not None else list(map(encode, todo))
            else:  # another page thread may have registered or dropped the variant meanwhile
                entries = self.entries.get(variant, entries)
            self.misses += len(fresh)
            fresh_keys = [keys[i] for i in missing] + (ahead.page_keys if ahead else [])
            kept = self._keep(variant, entries, fresh_keys, fresh)
            if entries:  # (re)registered: making room may have emptied and dropped it
                self.entries[variant] = entries
            for i, data in zip(missing, kept, strict=False):
                out[i] = data
        return out

    def _keep(
        self, variant: str, entries: dict[Any, bytes], keys: list[Any], fresh: Sequence[bytes]
    ) -> Sequence[bytes]:
        """Cache the batch (dropping the oldest batches to make room); the entries as served.
        A kept entry must be sized to its content: orjson.dumps returns bytes that keep its
        whole output buffer (>= 4 KiB allocated for a 400-byte record, measured with
        tracemalloc), so those are copied; a result marked `exact`
        (sandbox.world.columns.Encoded) is kept as it is."""
        exact = getattr(fresh, "exact", False)
        if not exact:
            fresh = [memoryview(data).tobytes() for data in fresh]
        batch = {  # (a key another page thread added meanwhile is there already)
            key: data
            for key, data in zip(keys, fresh, strict=True)
            if key is not None and key not in entries
        }
        size = sum(map(len, batch.values()))
        if not batch or size > self.max_bytes:
            return fresh
        self._make_room(size)
        entries.update(batch)
        self.nbytes += size
        self.batches.append((variant, list(batch), size))
        return fresh

    def _make_room(self, size: int) -> None:
        """Drop the oldest batches until `size` more bytes fit."""
        while self.batches and self.nbytes + size > self.max_bytes:
            variant, keys, dropped = self.batches.popleft()
            entries = self.entries.get(variant)
            if entries is None:
                continue
            # a batch's keys are in the cache until the batch goes (a batch only adds keys
            # that are not there, and only `sync` empties the cache, batches and all)
            deque(map(entries.pop, keys, repeat(None)), 0)
            self.nbytes -= dropped
            self.evicted += len(keys)
            if not entries:
                del self.entries[variant]

    def _ahead(self, page: Sequence[Record], entries: dict[Any, bytes]) -> Any:
        """The records that follow a cold page in its keyset scan and are not cached yet, as
        many as make a batch of `read_ahead` and fit in half the cache (None: none to add)."""
        following = getattr(page, "following", None)
        wanted = self.read_ahead - len(page)
        if following is None or wanted <= 0:
            return None
        count = sum(map(len, self.entries.values()))
        per_entry = self.nbytes / count if count else _GUESS_ENTRY_BYTES
        # at most half the cache in one batch, so a batch never drops the one before it
        wanted = min(wanted, int(self.max_bytes / 2 / max(per_entry, 1)) - len(page))
        ahead = following(wanted)
        if ahead is None or not len(ahead):
            return None
        keep = [i for i, key in enumerate(ahead.page_keys) if key not in entries]
        if not keep:
            return None
        return ahead if len(keep) == len(ahead) else ahead.subset(keep)

    def describe(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "entries": sum(map(len, self.entries.values())),
            "bytes": self.nbytes,
            "maxBytes": self.max_bytes,
            "hits": self.hits,
            "misses": self.misses,
            "readAhead": self.read_ahead_records,
            "invalidations": self.invalidations,
            "evicted": self.evicted,
        }


def page_bytes(
    parts: Sequence[Any],
    *,
    page: int,
    size: int,
    total: int,
    orders: Sequence[SortOrder],
    sort_object: bool = False,
) -> bytes:
    """The page envelope of query.envelope() around already encoded records (bytes-like)."""
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
            **sort_entry(orders, as_object=sort_object),
        }
    )
    head, tail = b'{"content":[', b"]" + rest[len(_EMPTY_CONTENT) :]
    if not parts:
        return head + tail
    if len(parts) == 1:
        return b"".join((head, parts[0], tail))
    # one join over the page (the records are copied once, not three times)
    return b",".join([head + parts[0], *parts[1:-1], b"".join((parts[-1], tail))])


__all__ = [
    "DEFAULT_CACHE_BYTES",
    "READ_AHEAD_RECORDS",
    "READ_ONCE_CACHE_BYTES",
    "RecordCache",
    "page_bytes",
]
