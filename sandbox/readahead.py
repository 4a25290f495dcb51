"""Reading ahead while the page thread is idle: the next records of the keyset scans being read.

A cold page of a keyset scan is encoded with the records that follow it (`RecordCache`'s
read-ahead, sandbox/encode.py): one page in ten of reservation details then costs a batch of
1,000 records (12-20 ms at large) while the requests behind it wait in the one page thread's
queue. `IdleReadAhead` remembers the scans recently served (by variant and the position their
next page starts at) and, when no page is waiting, encodes the next records of the scan with the
fewest cached ahead, a chunk at a time, into the same cache: the scan's next cold page is then
warm, and a page that arrives during a chunk waits for the chunk only.

The bytes served are the cache's, so they are the same; the chunk is encoded by the page's own
`encode_many` under the world's lock, for the world generation the scan was served at (the
scans are forgotten when the generation moves).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from sandbox.encode import RecordCache

# keep this many records of each scan encoded ahead of its last page (five pages of details),
# and one page at least
LOW_WATER = 500
# encode at most this many records in one idle step (a page arriving meanwhile waits for it)
CHUNK = 500
MAX_SCANS = 64  # the scans remembered, most recently served last


class IdleReadAhead:
    """The keyset scans recently served, and one step of reading ahead for them."""

    def __init__(
        self,
        cache: RecordCache,
        *,
        low_water: int = LOW_WATER,
        chunk: int = CHUNK,
        max_scans: int = MAX_SCANS,
    ) -> None:
        self.cache = cache
        self.low_water = low_water
        self.chunk = chunk
        self.max_scans = max_scans
        # (variant, position the next page starts at) -> (last page, its encode_many)
        self.scans: OrderedDict[tuple[str, int], tuple[Any, Callable[..., Any]]] = OrderedDict()
        self.generation: int | None = None
        self._dirty = False  # a scan was served since the last step found nothing to do
        self.steps = 0  # idle steps that encoded a chunk
        self.records = 0  # records they encoded

    def note(
        self,
        variant: str,
        page: Sequence[Any],
        encode_many: Callable[[Sequence[Any]], Sequence[bytes]] | None,
    ) -> None:
        """Remember the scan `page` belongs to (a page of a keyset scan, just served from a
        cache in use). Called under the world's lock."""
        positions = getattr(page, "positions", None)
        if encode_many is None or getattr(page, "scan", None) is None or not positions:
            return
        if self.generation != self.cache.generation:
            self.scans.clear()
            self.generation = self.cache.generation
        self.scans.pop((variant, positions[0]), None)  # this scan, at the page just served
        following = page.following(1)  # type: ignore[attr-defined]
        if following is None or not len(following):
            return  # the scan has ended
        key = (variant, following.positions[0])
        self.scans[key] = (page, encode_many)
        self.scans.move_to_end(key)
        if page.key_after(self._ahead_of(page) - 1) not in self.cache.entries.get(variant, {}):
            self._dirty = True  # this scan has work for a step
        while len(self.scans) > self.max_scans:
            self.scans.popitem(last=False)

    def pending(self) -> bool:
        """Whether a scan short of records ahead was served since the last step that found
        nothing to do."""
        return self._dirty

    def _ahead_of(self, page: Any) -> int:
        return max(self.low_water, len(page))  # a page ahead at least

    def _choose(self) -> tuple[str, int] | None:
        """The scan to read ahead for: the first (least recently served) whose next page is
        not cached, else the first with fewer than its records ahead cached (judged by the
        last of them: batches are encoded in scan order). None: none."""
        done: list[tuple[str, int]] = []
        chosen = None
        for key, (page, _encode) in self.scans.items():
            entries = self.cache.entries.get(key[0], {})
            near = page.key_after(0)
            if near is None:
                done.append(key)
                continue
            if near not in entries:
                chosen = key
                break
            if chosen is None and page.key_after(self._ahead_of(page) - 1) not in entries:
                chosen = key
        for key in done:
            del self.scans[key]
        return chosen

    def step(self) -> bool:
        """Encode up to `chunk` records of one remembered scan (`_choose`), from the first one
        ahead of its last page that is not cached. False: nothing to do. Called under the
        world's lock."""
        cache = self.cache
        if self.generation != cache.generation or cache.max_bytes <= 0:
            self.scans.clear()
        chosen = self._choose() if self.scans else None
        if chosen is None:
            self._dirty = False
            return False
        variant = chosen[0]
        page, encode_many = self.scans[chosen]
        entries = cache.entries.get(variant, {})
        ahead = page.following(self._ahead_of(page))
        keys = ahead.page_keys
        cached = next((i for i, k in enumerate(keys) if k not in entries), len(keys))
        todo = page.following(cached + self.chunk)
        keep = [i for i, k in enumerate(todo.page_keys) if i >= cached and k not in entries]
        if not keep:
            del self.scans[chosen]
            return True
        todo = todo.subset(keep)
        cache.keep_ahead(variant, todo.page_keys, encode_many(todo))
        if todo.page_keys[0] not in cache.entries.get(variant, {}):
            del self.scans[chosen]  # the cache did not keep them (no room): leave this scan
        self.steps += 1
        self.records += len(todo)
        return True

    def describe(self) -> dict[str, int]:
        return {"idleSteps": self.steps, "idleRecords": self.records, "scans": len(self.scans)}


__all__ = ["CHUNK", "LOW_WATER", "IdleReadAhead"]
