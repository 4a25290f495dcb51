"""Sequences over a column block that render records only when read: keys, records, children."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from sandbox.world.block import Block, ChildTable, Record, Section
from sandbox.world.pieces import NULL as NULL
from sandbox.world.rows import join_bytes


class _BlockView:
    """A block's live (not deleted, not thawed) positions, then a list of live items."""

    def __init__(self, block: Block, live: list[Any]) -> None:
        self.block = block
        self.live = live
        self.alive = block.alive_positions()
        self.nb = block.n_alive

    def __len__(self) -> int:
        return self.nb + len(self.live)


class KeyView(_BlockView, Sequence[int]):
    """Ascending keys of a table with a block: the block's live keys, then the list's."""

    live: list[int]

    def _key(self, i: int) -> int:
        if i < self.nb:
            a = self.alive
            return self.block.base + (i if a is None else int(a[i]))
        return self.live[i - self.nb]

    def at(self, indices: Sequence[int]) -> list[int]:
        """`[self[i] for i in indices]` (indices in range), block keys looked up at once."""
        ind = np.asarray(indices, dtype=np.int64)
        nb = self.nb
        if len(ind) and int(ind.max()) < nb and int(ind.min()) >= 0:
            pos = ind if self.alive is None else self.alive[ind]
            return (pos + self.block.base).tolist()
        return [self[i] for i in indices]

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._key(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._key(i)

    def __iter__(self) -> Iterator[int]:
        a = self.alive
        if a is None:
            yield from range(self.block.base, self.block.base + self.nb)
        else:
            yield from (a + self.block.base).tolist()
        yield from self.live


class RecordsView(_BlockView, Sequence[Record]):
    """Records of a table with a block in key order, rendered on demand (in chunks)."""

    CHUNK = 2048
    live: list[Record]

    def take(self, indices: Sequence[int]) -> list[Record]:
        """Records at view indices (ascending or not), block ones rendered in one batch."""
        nb = self.nb
        blk = [i for i in indices if i < nb]
        out: dict[int, Record] = {}
        if blk:
            arr = np.asarray(blk, dtype=np.int64)
            pos = arr if self.alive is None else self.alive[arr]
            for i, rec in zip(blk, self.block.render(pos), strict=True):
                out[i] = rec
        return [out[i] if i < nb else self.live[i - nb] for i in indices]

    def _block_positions(self, ind: np.ndarray) -> np.ndarray:
        return ind if self.alive is None else self.alive[ind]

    def encode(self, indices: Sequence[int]) -> Sequence[bytes]:
        """`[orjson.dumps(r) for r in self.take(indices)]`, block records encoded from the
        columns (see `Block.encode`)."""
        ind = np.asarray(indices, dtype=np.int64)
        nb = self.nb
        if not len(ind) or (ind < nb).all():
            return self.block.encode(self._block_positions(ind))
        out: list[bytes] = [b""] * len(ind)
        in_block = np.flatnonzero(ind < nb)
        encoded = self.block.encode(self._block_positions(ind[in_block]))
        for i, data in zip(in_block.tolist(), encoded, strict=True):
            out[i] = data
        for i in np.flatnonzero(ind >= nb).tolist():
            out[i] = orjson.dumps(self.live[int(ind[i]) - nb])
        return out

    def encode_with_children(
        self, indices: Sequence[int], sections: Sequence[Section]
    ) -> Sequence[bytes | None]:
        """The JSON of the records at view indices `indices`, each followed by its children in
        `sections`: `orjson.dumps({**record, key: children, ...})` for each section `(key,
        table, field, value)`, where `children` are `table.children(record key)` whose `field`
        equals `value` (all of them when `field` is None), in key order.

        Encoded from the columns, a whole page per child table at once, for the records that
        are in the block and not thawed and whose children are all so too. The others (and
        every record when a section key is also a field) are None: the caller builds them."""
        out: list[bytes | None] = [None] * len(indices)
        blk = self.block
        ind = np.asarray(indices, dtype=np.int64)
        slots = np.flatnonzero(ind < self.nb)
        if not len(slots) or any(key in blk.fields for key, *_ in sections):
            return out
        pos = self._block_positions(ind[slots])
        ok = np.ones(len(pos), dtype=bool)
        thawed = blk.in_overlay(pos)
        if thawed is not None:
            ok &= ~thawed
        rids = pos + blk.base
        # each child table's children of the page: block positions and their parent's slot
        kids: dict[int, tuple[ChildTable, np.ndarray, np.ndarray]] = {}
        for _key, table, _field, _value in sections:
            if id(table) in kids:
                continue
            cb = table.block
            if cb is None or cb.parent is None:
                flat = owner = np.zeros(0, dtype=np.int64)
            else:
                flat, counts = cb.children_positions(rids)
                owner = np.repeat(np.arange(len(rids)), counts)
                thawed = cb.in_overlay(flat)
                if thawed is not None:
                    ok[owner[thawed]] = False
            index = table.index  # children added after generation: built the ordinary way
            if index and not index.keys().isdisjoint(rids.tolist()):
                ok &= ~np.fromiter((bool(index.get(r)) for r in rids.tolist()), bool, len(rids))
            kids[id(table)] = (table, flat, owner)
        chosen = np.flatnonzero(ok)
        if not len(chosen):
            return out
        n_par = len(chosen)
        new_slot = np.full(len(pos), -1, dtype=np.int64)
        new_slot[chosen] = np.arange(n_par)
        # Each section's text per parent is a stretch of its rows' text: the rows are ordered
        # by (section, parent), each starting with `,` but the first of its (section, parent),
        # so that a parent's section is one slice of the rows' buffer (no copy).
        texts: list[pa.Array | None] = [None] * len(sections)
        for tid, (table, flat, owner) in kids.items():
            keep = ok[owner]
            flat, owner = flat[keep], new_slot[owner[keep]]
            mine = [s for s, sec in enumerate(sections) if id(sec[1]) == tid]
            rows, owners, secs = [], [], []
            for k, s in enumerate(mine):
                field, value = sections[s][2], sections[s][3]
                if field is None or not len(flat):
                    match: Any = slice(None)
                else:
                    assert table.block is not None
                    match = table.block.equals(field, value, flat)
                rows.append(flat[match])
                owners.append(owner[match])
                secs.append(np.full(len(rows[-1]), k, dtype=np.int64))
            r_pos, r_own, r_sec = (np.concatenate(a) for a in (rows, owners, secs))
            group = r_sec * n_par + r_own
            order = np.argsort(group, kind="stable")  # key order within a group
            r_pos, group = r_pos[order], group[order]
            if len(r_pos):
                first = np.ones(len(group), dtype=bool)
                first[1:] = group[1:] != group[:-1]
                assert table.block is not None
                text = table.block.encode_json(r_pos, first=first)
                offsets = np.frombuffer(text.buffers()[1], dtype=np.int32)
                offsets = offsets[text.offset : text.offset + len(text) + 1]
                data = text.buffers()[2] or pa.py_buffer(b"")
            else:
                offsets, data = np.zeros(1, dtype=np.int32), pa.py_buffer(b"")
            bounds = np.searchsorted(group, np.arange(len(mine) * n_par + 1))
            for k, s in enumerate(mine):
                cut = offsets[bounds[k * n_par : (k + 1) * n_par + 1]]
                texts[s] = pa.StringArray.from_buffers(n_par, pa.py_buffer(cut.tobytes()), data)
        lead = "," if blk.fields else ""
        pieces: list[Any] = blk.json_pieces(pos[chosen], close=False)
        for s, (key, *_rest) in enumerate(sections):
            pieces += [("]," if s else lead) + orjson.dumps(key).decode() + ":[", texts[s]]
        pieces.append("]}" if sections else "}")
        docs = join_bytes(pieces, n_par)
        if n_par == len(out):  # every record from the columns
            return docs
        for slot, data in zip(slots[chosen].tolist(), docs, strict=True):
            out[slot] = data
        return out

    def project(self, indices: Sequence[int], fields: Sequence[str]) -> list[Record]:
        """Like `take`, but block records carry only `fields` (see `Block.project`)."""
        nb = self.nb
        blk = [i for i in indices if i < nb]
        out: dict[int, Record] = {}
        if blk:
            arr = np.asarray(blk, dtype=np.int64)
            pos = arr if self.alive is None else self.alive[arr]
            for i, rec in zip(blk, self.block.project(pos, fields), strict=True):
                out[i] = rec
        return [out[i] if i < nb else self.live[i - nb] for i in indices]

    def _range(self, start: int, stop: int) -> list[Record]:
        nb = self.nb
        out: list[Record] = []
        if start < nb:
            b_stop = min(stop, nb)
            if self.alive is None:
                out.extend(self.block.render(slice(start, b_stop)))
            else:
                out.extend(self.block.render(self.alive[start:b_stop]))
        if stop > nb:
            out.extend(self.live[max(0, start - nb) : stop - nb])
        return out

    def __getitem__(self, i: Any) -> Any:
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step != 1:
                return self.take(list(range(start, stop, step)))
            return self._range(start, max(start, stop))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._range(i, i + 1)[0]

    def __iter__(self) -> Iterator[Record]:
        n = len(self)
        for start in range(0, n, self.CHUNK):
            yield from self._range(start, min(n, start + self.CHUNK))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=False)
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class ChildView(Sequence[Record]):
    """One parent's records in ascending key order, with their keys (`key_list`) known up front
    and records rendered only for the positions read (`take`): a keyset page of a parent's
    children renders one page, not every child of the parent.

    The block's records come first (their keys are below every key added later), then the live
    records of the list part (created after generation)."""

    def __init__(self, table: ChildTable, parent: int) -> None:
        blk = table.block
        if blk is not None and blk.parent is not None:
            self._pos = blk.child_positions(parent).astype(np.int64, copy=False)
        else:
            self._pos = np.zeros(0, dtype=np.int64)
        self._blk = blk
        self._listed = table._listed_children(parent) if table.index.get(parent) else []
        base = blk.base if blk is not None else 0
        self.key_list: list[int] = [
            *(self._pos + base).tolist(),
            *(rec[table.pk] for rec in self._listed),
        ]

    def __len__(self) -> int:
        return len(self.key_list)

    def take(self, indices: Sequence[int]) -> list[Record]:
        nb = len(self._pos)
        in_block = [i for i in indices if i < nb]
        rendered = iter(self._blk.render(self._pos[in_block]) if in_block and self._blk else ())
        return [next(rendered) if i < nb else self._listed[i - nb] for i in indices]

    def encode(self, indices: Sequence[int]) -> Sequence[bytes]:
        """`[orjson.dumps(r) for r in self.take(indices)]`, block records from the columns."""
        ind = np.asarray(indices, dtype=np.int64)
        nb = len(self._pos)
        if self._blk is not None and len(ind) and int(ind.max()) < nb:
            return self._blk.encode(self._pos[ind])
        out: list[bytes] = [b""] * len(ind)
        in_block = np.flatnonzero(ind < nb)
        if len(in_block) and self._blk is not None:
            encoded = self._blk.encode(self._pos[ind[in_block]])
            for k, data in zip(in_block.tolist(), encoded, strict=True):
                out[k] = data
        for k in np.flatnonzero(ind >= nb).tolist():
            out[k] = orjson.dumps(self._listed[int(ind[k]) - nb])
        return out

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return self.take(range(len(self))[i])
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self.take([i % n])[0]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.take(range(len(self))))
