"""The encode cache holds what it counts: entries are copied to their own size, because
orjson.dumps returns bytes that keep its whole (>= 4 KiB) output buffer."""

from __future__ import annotations

import tracemalloc

import orjson

from sandbox.encode import RecordCache


class _World:
    generation = 1


def test_cached_entries_cost_about_their_byte_count() -> None:
    records = [{"journalEntryId": i, "description": "x" * 300} for i in range(2000)]
    cache = RecordCache(max_bytes=10 * 2**20)
    assert cache.sync(_World())
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        cache.encode_all("plain", records, "journalEntryId", orjson.dumps, enabled=True)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert cache.nbytes == sum(len(orjson.dumps(r)) for r in records)
    # entries, keys and the dict itself: well under twice the counted bytes (it was ~12x)
    assert held < 2 * cache.nbytes, (held, cache.nbytes)
    assert cache.encode_all("plain", records[:3], "journalEntryId", orjson.dumps, enabled=True) == [
        orjson.dumps(r) for r in records[:3]
    ]
