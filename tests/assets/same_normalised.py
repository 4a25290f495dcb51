"""One comparison of two normalisations of the same page (the typed read against the dicts', the
C extension's columns against Python's): the tests that hold two paths to one result share it."""

from __future__ import annotations

from assets.normalise import Normalised


def assert_same(got: Normalised | BaseException, want: Normalised | BaseException) -> None:
    """The same counts, reasons, unknown and dropped fields, quarantine and tables (schema and
    values, each table validated in full); or, where either path raised, the same exception."""
    if isinstance(want, BaseException) or isinstance(got, BaseException):
        assert type(got) is type(want) and str(got) == str(want), (got, want)
        return
    assert (got.records, got.quarantined) == (want.records, want.quarantined)
    assert got.reasons == want.reasons
    assert got.unknown_fields == want.unknown_fields
    assert got.dropped_pii_fields == want.dropped_pii_fields
    assert got.quarantine.equals(want.quarantine)
    for held in ("tables", "partial", "lost"):
        mine, theirs = getattr(got, held), getattr(want, held)
        assert set(mine) == set(theirs), held
        for name, table in mine.items():
            assert table.schema == theirs[name].schema, (held, name)
            table.validate(full=True)
            assert table.equals(theirs[name]), (held, name)
