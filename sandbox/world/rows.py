"""A row's JSON object written from its columns' pieces (RowPlan), joined into bytes per record."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

try:  # built by the install (pyproject.toml); optional, as Arrow's join gives the same text
    from sandbox.world import _rowjoin
except ImportError:  # pragma: no cover - a machine without a C compiler
    _rowjoin = None

from sandbox.world.columns import ConstColumn, FusedVocab, Lookup, LookupRun, VocabColumn
from sandbox.world.pieces import (
    JOIN,
    MAX_COMBINATIONS,
    NO_SEPARATOR,
    Getter,
    Numbers,
    Pieces,
    Tables,
    Taken,
    dumps_text,
    folds,
    json_pieces,
    scalar_of,
    take_text,
)


class RowPlan:
    """How to write the JSON object of a row from the columns: the columns' pieces with the
    literal text between them (keys, constants, braces) folded into a neighbour that takes it
    (`folds`). Vocabulary columns over the same codes become one lookup (`FusedVocab`), and
    adjacent lookups one run (`LookupRun`)."""

    def __init__(self, fields: Sequence[str], getters: Sequence[Getter], *, close: bool) -> None:
        # the row as alternating literal text and columns: lits[k] comes before cols[k]
        cols: list[Any] = []
        lits: list[str] = ["{"]
        k = 0
        while k < len(fields):
            getter = getters[k]
            key = ("," if k else "") + dumps_text(fields[k]) + ":"
            k += 1
            if isinstance(getter, ConstColumn):
                lits[-1] += key + dumps_text(getter.value)
                continue
            lits[-1] += key
            if isinstance(getter, VocabColumn):  # vocabularies over the same codes
                run, links, link, j = [getter], [], "", k
                while j < len(fields):
                    nxt = getters[j]
                    nxt_key = "," + dumps_text(fields[j]) + ":"
                    if isinstance(nxt, ConstColumn):
                        link += nxt_key + dumps_text(nxt.value)
                    elif isinstance(nxt, VocabColumn) and nxt.codes is getter.codes:
                        run.append(nxt)
                        links.append(link + nxt_key)
                        link, k = "", j + 1
                    else:
                        break
                    j += 1
                if len(run) > 1:
                    getter = FusedVocab(run, links)
            cols.append(getter)
            lits.append("")
        lits[-1] += "}" if close else ""
        cols, lits = self._runs(cols, lits)
        # each literal goes into the column after it or before it if one takes it, else it is
        # a piece of its own (between two columns that write numbers, say)
        self.steps: list[list[Any]] = [[c, "", ""] for c in cols]  # column, prefix, suffix
        self.head = ""  # a literal piece before everything (when the first column takes none)
        for i, text in enumerate(lits):
            after = self.steps[i] if i < len(cols) else None
            before = self.steps[i - 1] if i > 0 else None
            if after is not None and folds(after[0])[0]:
                after[1] = text
            elif before is not None and folds(before[0])[1]:
                before[2] = text
            elif after is not None:
                after[1] = text  # a piece of its own, just before the column
            elif before is not None:
                before[2] = text
            else:
                self.head = text  # no columns at all
        self.lead_folds = bool(self.steps) and folds(self.steps[0][0])[0]

    @staticmethod
    def _runs(cols: list[Any], lits: list[str]) -> tuple[list[Any], list[str]]:
        """Merge adjacent lookups into runs while their combinations fit."""
        out_cols: list[Any] = []
        out_lits: list[str] = [lits[0]]
        i = 0
        while i < len(cols):
            run, links, size = [cols[i]], [], 1
            if isinstance(cols[i], Lookup) and folds(cols[i])[0]:
                size = len(cols[i].texts_cached())
                j = i + 1
                while j < len(cols) and isinstance(cols[j], Lookup) and folds(cols[j])[0]:
                    nxt = len(cols[j].texts_cached())
                    if size * nxt > MAX_COMBINATIONS:
                        break
                    run.append(cols[j])
                    links.append(lits[j])
                    size *= nxt
                    j += 1
            out_cols.append(run[0] if len(run) == 1 else LookupRun(run, links))
            i += len(run)
            out_lits.append(lits[i])
        return out_cols, out_lits

    def encode(self, idx: Any, n: int, first: np.ndarray | None = None) -> pa.Array:
        """The text of the rows at positions `idx` (a string array of `n` rows). With `first`
        (a bool per row), a row that is not first of its group starts with `,`."""
        return join_pieces(self.pieces(idx, n, first), n)

    def pieces(self, idx: Any, n: int, first: np.ndarray | None = None) -> Pieces:
        """The pieces that `encode` joins (for a caller that joins them with more)."""
        pieces: Pieces = [self.head]
        for k, (column, prefix, suffix) in enumerate(self.steps):
            if k == 0 and first is not None:
                if self.lead_folds:
                    pieces.append(take_text(_COMMAS.get(), first.view(np.int8)))
                else:  # the comma joins the literal before the first column
                    pieces.append(take_text(_COMMAS.get("", prefix), first.view(np.int8)))
                    prefix = ""
            pieces.extend(json_pieces(column, idx, n, prefix, suffix))
        if not self.steps and first is not None:
            pieces.insert(0, take_text(_COMMAS.get(), first.view(np.int8)))
        return pieces


_COMMAS = Tables(lambda: [",", ""])  # before a row that is not / is the first of its group


def join_pieces(pieces: Pieces, n: int) -> pa.Array:
    """Concatenate pieces row by row into one string array of `n` rows (in C where the
    extension is built and no piece holds a null, else by Arrow's kernel: the same text)."""
    merged = _merged(pieces)
    if all(isinstance(p, str) for p in merged):
        return pa.array(["".join(merged)] * n, type=pa.string())  # type: ignore[arg-type]
    if _rowjoin is not None:
        args = _c_args(merged, n)
        if args is not None:
            try:
                offsets, data = _rowjoin.join(n, args)
            except OverflowError:  # beyond int32 offsets: Arrow's kernel says what it does
                pass
            else:
                return pa.StringArray.from_buffers(
                    n, pa.py_buffer(offsets), pa.py_buffer(data), null_count=0
                )
    args = [_arrow_piece(p) for p in merged]
    if len(args) == 1:
        return args[0]
    return JOIN.call([*args, NO_SEPARATOR])


def join_bytes(pieces: Pieces, n: int) -> Encoded:
    """`to_bytes(join_pieces(pieces, n))`, in C straight into one bytes object per row where it
    can (no string array in between)."""
    if _rowjoin is not None:
        merged = _merged(pieces)
        args = _c_args(merged, n) if not all(isinstance(p, str) for p in merged) else None
        if args is not None:
            with contextlib.suppress(OverflowError):
                return Encoded(_rowjoin.join(n, args, True))
    return Encoded.of(join_pieces(pieces, n))


def _merged(pieces: Pieces) -> Pieces:
    """The pieces with adjacent literals merged and empty ones left out."""
    merged: Pieces = []
    for piece in pieces:
        if isinstance(piece, str):
            if not piece:
                continue
            if merged and isinstance(merged[-1], str):
                merged[-1] += piece
                continue
        merged.append(piece)
    return merged


def _arrow_piece(piece: Any) -> Any:
    if isinstance(piece, str):
        return scalar_of(piece)
    return piece.array() if isinstance(piece, Taken | Numbers) else piece


def _c_args(merged: Pieces, n: int) -> list[Any] | None:
    """The pieces as `sandbox.world._rowjoin.join` takes them (None: one it does not take)."""
    args: list[Any] = []
    for piece in merged:
        if isinstance(piece, str):
            args.append(piece.encode())
            continue
        if isinstance(piece, Numbers):
            if len(piece) != n:
                return None
            args.append((piece.values,))
            continue
        if isinstance(piece, Taken):
            table = piece.table
            if table.type != pa.string() or table.null_count or len(piece) != n:
                return None
            _, offsets, data = table.buffers()
            args.append((offsets, data, table.offset, piece.index))
            continue
        if piece.type != pa.string() or piece.null_count or len(piece) != n:
            return None
        _, offsets, data = piece.buffers()
        args.append((offsets, data, piece.offset))
    return args


def to_bytes(rows: pa.Array) -> list[bytes]:
    """Python bytes of a string array (each sized to its content)."""
    return rows.cast(pa.binary()).to_pylist()


class Encoded(list[bytes]):
    """Encoded records, each a bytes object sized to its content (from a string array): a cache
    may keep them as they are (`exact`), where orjson's results need a copy."""

    exact = True

    @classmethod
    def of(cls, rows: pa.Array) -> Encoded:
        return cls(to_bytes(rows))
