"""The row join in C (sandbox/world/_rowjoin.c) writes byte for byte what Arrow's take, cast and
join give the same pieces: literals, string arrays (sliced too), lookups in tables (sliced too),
integers of every size; a position outside its table is refused when the lookup is made, as
Arrow's take refuses it; pieces it does not take (nulls) are joined by Arrow."""

from __future__ import annotations

import random

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from sandbox.world import rows
from sandbox.world.pieces import Numbers, Taken, decimal_text, take_text
from sandbox.world.rows import join_bytes, join_pieces, to_bytes

TEXTS = ["Zoë", 'q"\\', "tab\t", "", "😀", "x" * 300, "\u2028", "0"]


def _arrow_join(pieces: list, n: int) -> pa.Array:
    """What join_pieces gave before the C join: Arrow's take / cast, then its join."""
    args = []
    for piece in pieces:
        if isinstance(piece, str):
            args.append(pa.scalar(piece, type=pa.string()))
        elif isinstance(piece, Taken):
            args.append(pc.take(piece.table, pa.array(piece.index, type=pa.int64())))
        elif isinstance(piece, Numbers):
            args.append(pc.cast(pa.array(piece.values), pa.string()))
        else:
            args.append(piece)
    if not any(isinstance(a, pa.Array) for a in args):
        return pa.array(["".join(a.as_py() for a in args)] * n, type=pa.string())
    return pc.binary_join_element_wise(*args, "")


def _pieces(rng: random.Random, n: int) -> list:
    out: list = []
    for _ in range(rng.randint(1, 9)):
        kind = rng.randrange(5)
        if kind == 0:
            out.append(rng.choice(TEXTS))
        elif kind == 1:  # a string array, sometimes a slice of a longer one
            skip = rng.randrange(3)
            full = pa.array([rng.choice(TEXTS) for _ in range(n + skip)], type=pa.string())
            out.append(full.slice(skip, n))
        elif kind == 2:  # a lookup, sometimes in a sliced table
            skip = rng.randrange(3)
            table = pa.array(TEXTS + TEXTS[:skip], type=pa.string()).slice(skip)
            index = np.array([rng.randrange(len(table)) for _ in range(n)], dtype=np.int8)
            out.append(take_text(table, index))
        elif kind == 3:
            dtype = rng.choice([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
            info = np.iinfo(dtype)
            edges = [info.min, info.max, 0, -1 if info.min < 0 else 1, 9, 10, 99, 100]
            values = [
                rng.choice(edges) if rng.random() < 0.5 else rng.randint(info.min, info.max)
                for _ in range(n)
            ]
            out.append(decimal_text(np.array(values, dtype=dtype)))
        else:
            out.append(pa.array([str(rng.random()) for _ in range(n)], type=pa.string()))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_the_c_join_writes_what_arrow_writes(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([0, 1, 2, 7, 100])
    pieces = _pieces(rng, n)
    got = join_pieces(pieces, n)
    want = _arrow_join(pieces, n)
    assert got.type == pa.string()
    assert got.to_pylist() == want.to_pylist()
    split = join_bytes(pieces, n)  # one bytes object per row, straight from the pieces
    assert list(split) == to_bytes(want) and split.exact
    assert all(type(b) is bytes for b in split)


def test_the_c_join_is_the_one_used(monkeypatch: pytest.MonkeyPatch) -> None:
    assert rows._rowjoin is not None, "the extension sandbox.world._rowjoin was not built"
    calls: list[int] = []
    real = rows._rowjoin.join

    class Counting:
        @staticmethod
        def join(n: int, args: list, split: bool = False) -> object:
            calls.append(n)
            return real(n, args, split)

    monkeypatch.setattr(rows, "_rowjoin", Counting)
    table = pa.array(["a", "bc"], type=pa.string())
    got = join_pieces(
        ["{", take_text(table, np.array([1, 0])), ":", decimal_text(np.array([-5, 12]))], 2
    )
    assert got.to_pylist() == ["{bc:-5", "{a:12"]
    assert calls == [2]


def test_without_the_extension_arrow_joins_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(99)
    pieces = _pieces(rng, 50)
    with_c = join_pieces(pieces, 50).to_pylist()
    split = list(join_bytes(pieces, 50))
    monkeypatch.setattr(rows, "_rowjoin", None)
    assert join_pieces(pieces, 50).to_pylist() == with_c == _arrow_join(pieces, 50).to_pylist()
    assert list(join_bytes(pieces, 50)) == split == [t.encode() for t in with_c]


def test_a_position_outside_the_table_is_refused_when_looked_up() -> None:
    table = pa.array(["a", "b"], type=pa.string())
    with pytest.raises(pa.ArrowIndexError):
        take_text(table, np.array([0, 2]))
    with pytest.raises(pa.ArrowIndexError):
        take_text(table, np.array([-1, 0]))
    with pytest.raises(IndexError):  # the C join checks again, whatever it is given
        rows._rowjoin.join(2, [(table.buffers()[1], table.buffers()[2], 0, np.array([0, 5]))])


def test_pieces_with_nulls_are_joined_by_arrow() -> None:
    with_null = pa.array(["x", None, "z"], type=pa.string())
    got = join_pieces(["<", with_null, ">"], 3)
    assert got.to_pylist() == ["<x>", None, "<z>"]


def test_integers_are_written_as_orjson_writes_them() -> None:
    values = np.array([0, -1, 7, -(2**63), 2**63 - 1, 10**18, -(10**15)], dtype=np.int64)
    got = join_pieces([decimal_text(values)], len(values)).to_pylist()
    assert got == [orjson.dumps(int(v)).decode() for v in values]
