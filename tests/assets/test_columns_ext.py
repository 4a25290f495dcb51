"""The C extension's own edges (`assets._columns`), called directly with what the decoder never
makes but the C must still survive: rows of another Struct type, nested objects of another type,
no rows, sections of no items; its references (no object gains or loses one across calls); and
the normaliser's memory staying flat over the same pages normalised again and again."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from datetime import UTC, datetime

import msgspec
import orjson
import pytest

from assets import compiled
from assets.catalogue import SPECS
from assets.normalise import Normaliser
from service.lazy import LazyRecords, skim
from tests.assets.fake_service import reservation

_columns = compiled._columns
pytestmark = pytest.mark.skipif(_columns is None, reason="the extension is not built")

INT, FLOAT, BOOL, STR, DATE, DATETIME = range(6)


class Sub(msgspec.Struct, gc=False):
    f0: str | None = None


class Row(msgspec.Struct, gc=False):
    f0: int | float | None = None
    f1: str | None = None
    f2: bool | None = None
    f3: Sub | None = None
    f4: list[Sub] | None = None


class Other(msgspec.Struct, gc=False):
    f0: int | float | None = None
    f1: str | None = None
    f2: bool | None = None
    f3: Sub | None = None
    f4: list[Sub] | None = None


def _off(struct: type, i: int) -> int:
    return int(_columns.member_offset(struct.__dict__[f"f{i}"]))


F0, F1, F2, F3, F4 = (_off(Row, i) for i in range(5))
SUB = _off(Sub, 0)
SPECS_ = (
    (F0, -1, None, INT),
    (F0, -1, None, FLOAT),
    (F1, -1, None, STR),
    (F1, -1, None, DATE),
    (F1, -1, None, DATETIME),
    (F2, -1, None, BOOL),
    (F3, SUB, Sub, STR),
    (F3, SUB, Sub, DATETIME),
)


def _rows() -> list[Row]:
    return [
        Row(1, "2026-07-01", True, Sub("2026-07-01T10:00:00"), [Sub("a"), Sub("é")]),
        Row(None, None, None, None, None),
        Row(2**53, "x" * 1000, False, Sub(None), []),
        Row(-(2**53), "é 🌊", None, Sub("2026-07-01T10:00:00.123"), [Sub(None)]),
    ]


def test_rows_of_another_struct_decline_or_raise_and_never_read_its_slots() -> None:
    rows: list[object] = [*_rows(), Other(1, "a", True, None, None)]
    assert _columns.columns(rows, Row, SPECS_) is None
    with pytest.raises(TypeError):
        _columns.values(rows, Row, F1, -1, None)
    with pytest.raises(TypeError, match="not a list"):
        _columns.sections(rows, Row, (F4,))
    rows = [*_rows(), "not a struct", None, 7]
    assert _columns.columns(rows, Row, SPECS_) is None
    with pytest.raises(TypeError):
        _columns.sections(rows, Row, (F4,))


def test_rows_of_another_struct_decline_with_no_typed_column() -> None:
    """A table with no typed column still has its rows' types checked: `values` reads the slots
    of the rows `columns` has vouched for."""
    assert _columns.columns(_rows(), Row, ()) == []
    assert _columns.columns([*_rows(), Other()], Row, ()) is None
    assert _columns.columns([Other()], Row, ()) is None


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("1", INT), (1.5, INT), (True, INT), (2**63, INT), ("1", FLOAT), (2**53 + 1, FLOAT),
        (1, BOOL), ("true", BOOL), (1, STR), (b"x", STR), ("\ud800", STR), ("a\udfffb", STR),
    ],
)  # fmt: skip
def test_values_the_decoder_never_makes_decline(value: object, kind: int) -> None:
    """A value of another Python type in a typed slot, an integer beyond its column, text that is
    not UTF-8 (a lone surrogate): the column declines (the Python path decides), no error left
    set."""
    field = F1 if kind == STR else F2 if kind == BOOL else F0
    for at in (0, 3):
        rows = _rows()
        setattr(rows[at], f"f{(F0, F1, F2).index(field)}", value)
        assert _columns.columns(rows, Row, ((field, -1, None, kind),)) is None


def test_nested_objects_of_another_type_decline() -> None:
    rows = _rows()
    rows[0].f3 = Other(1)  # type: ignore[assignment]
    assert _columns.columns(rows, Row, ((F3, SUB, Sub, STR),)) is None
    with pytest.raises(TypeError):
        _columns.values(rows, Row, F3, SUB, Sub)
    rows[0].f3 = "text"  # type: ignore[assignment]
    assert _columns.columns(rows, Row, ((F3, SUB, Sub, STR),)) is None


def test_no_rows_and_no_items() -> None:
    built = _columns.columns([], Row, SPECS_)
    assert [b[:2] for b in built] == [(k, 0) for *_, k in SPECS_]
    assert _columns.values([], Row, F1, -1, None) == []
    items, parents, totals = _columns.sections([], Row, (F4, F4))
    assert (items, parents, totals) == ([], b"", (0, 0))
    rows = [Row(f4=None), Row(f4=[])]
    assert _columns.sections(rows, Row, (F4,)) == ([], b"", (0,))


def test_sections_of_mixed_items_decline_in_the_child_columns() -> None:
    """A section's list holds what the decoder put there; items of another type are carried
    over as they are and the child's columns decline them (never read at a wrong offset)."""
    rows = [Row(f4=[Sub("a"), Other(1), "x", None])]  # type: ignore[list-item]
    items, parents, totals = _columns.sections(rows, Row, (F4,))
    assert len(items) == 4 and totals == (4,) and len(parents) == 32
    assert _columns.columns(items, Sub, ((SUB, -1, None, STR),)) is None


def _refcounts(objs: list[object]) -> list[int]:
    return [sys.getrefcount(o) for o in objs]


def test_no_reference_gained_or_lost() -> None:
    rows = _rows()
    values = [getattr(r, f) for r in rows for f in Row.__struct_fields__]
    objs: list[object] = [  # not the shared ones (None, True, small integers)
        *(v for v in values if isinstance(v, str | list | Sub)),
        *(s for r in rows if r.f4 for s in r.f4),
        *rows,
    ]
    before = _refcounts(objs)
    for _ in range(50):
        assert _columns.columns(rows, Row, SPECS_) is not None
        assert _columns.values(rows, Row, F1, -1, None)[0] is rows[0].f1
        assert _columns.values(rows, Row, F3, SUB, Sub)[1] is None
        items, _, _ = _columns.sections(rows, Row, (F4, F4))
        del items
        assert _columns.columns([*rows, Other()], Row, SPECS_) is None
        with pytest.raises(TypeError):
            _columns.sections([*rows, Other(f4="x")], Row, (F4,))  # type: ignore[arg-type]
    assert _refcounts(objs) == before


def _pages() -> list[bytes]:
    """Small pages, so that a leak of a few bytes a page shows: a clean one, one the extension
    declines (an integer beyond int64: the Python path), one with its date columns as text, one
    of long non-ASCII text, and one of no records."""
    clean = [reservation(i) for i in range(1, 4)]
    declined = [reservation(i) for i in range(1, 4)]
    declined[1]["status"] = 2**63
    as_text = [reservation(i) for i in range(1, 4)]
    for rec in as_text:
        rec.update(arrivalDate="2026-02-30", reservationDate="2026-01-02 10:11:12")
    long = [reservation(i, reservationNumber="é 🌊" * 1000) for i in range(1, 4)]
    return [orjson.dumps({"content": p}) for p in (clean, declined, as_text, long, [])]


def _content(page: object) -> LazyRecords:
    assert isinstance(page, dict)
    return page["content"]


def test_the_same_pages_again_and_again_keep_memory_flat() -> None:
    """A reference leaked in the C (a buffer, a column tuple, a section's items) would grow the
    traced memory with every page: nothing the extension made outlives its page, and the
    process's traced memory is the same after 200 more rounds as after 50."""
    spec = next(s for s in SPECS if s.name == "reservations")
    normaliser = Normaliser(spec, batch_id="20260101T120000Z-00000001")
    key = spec.table.columns[0].source
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    bodies = _pages()
    pages = [skim(b, key, spec.source) for b in bodies]
    assert all(isinstance(p, dict) and isinstance(p["content"], LazyRecords) for p in pages)
    built: list[bool] = []
    reader = normaliser._reader._compiled
    assert reader is not None
    page = reader.page
    reader.page = lambda rows: built.append(page(rows) is not None) or page(rows)  # type: ignore[method-assign]
    normaliser.normalise(pages[0]["content"], now)  # type: ignore[index]
    assert built == [True]  # the clean page is the extension's
    reader.page = page  # type: ignore[method-assign]

    def run(times: int) -> None:
        for _ in range(times):
            for body in bodies:  # a LazyRecords decodes once: a new one each time
                normaliser.normalise(_content(skim(body, key, spec.source)), now)

    run(20)  # caches, interned strings, pyarrow's pools
    gc.collect()
    tracemalloc.start()
    try:
        run(50)
        gc.collect()
        first, _ = tracemalloc.get_traced_memory()
        run(200)
        gc.collect()
        second, _ = tracemalloc.get_traced_memory()
        snapshot = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # what is still held of what the extension made (its calls are all in assets/compiled.py)
    held = snapshot.filter_traces([tracemalloc.Filter(True, compiled.__file__)])
    assert sum(s.size for s in held.statistics("filename")) < 2048, held.statistics("lineno")[:5]
    assert second - first < 64 * 1024, (first, second)


@pytest.mark.chaos
def test_text_beyond_int32_offsets_declines() -> None:
    """Arrow's string offsets are int32: a column of more than 2 GiB of text is declined (the
    Python path decides), never written with wrapped offsets. One 1 GiB string held by three
    rows: the C counts the bytes before it copies any."""
    text = "x" * (1 << 30)
    rows = [Row(f1=text), Row(f1=None), Row(f1=text), Row(f1=text)]
    assert _columns.columns(rows, Row, ((F1, -1, None, STR),)) is None
    assert _columns.columns(rows, Row, ((F1, -1, None, DATE),)) is None  # as text, then declined
    assert _columns.columns(rows[:2], Row, ((F1, -1, None, STR),)) is not None
