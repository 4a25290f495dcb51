"""Pages whose records are decoded where they are used, not where they are received.

Turning a page of JSON into Python records is most of a full read's client CPU: ~805 MB of JSON
at medium scale cost 3.5-4 s of `orjson.loads` and ~1 s of freeing the records, against ~3 s
for all the HTTP work of 1,862 requests (`docs/benchmarks.md`, "Session 5"). Paging needs far
less than the records: the envelope (`last`, `totalElements`, ...), how many records came and,
for keyset paging, each record's key. `skim` reads exactly that with a typed msgspec decoder that
skips everything else (~1.6 GB/s against orjson's ~320 MB/s on the same pages), so the event
loop that keeps the request slots busy stays free, and the full decode runs in whoever consumes
the page: the asset's thread, or a normaliser worker process when the page is pickled to it
(`LazyRecords` pickles as its bytes, undecoded).

A page the skim cannot read (truncated or malformed JSON, a record that is not an object, a
`content` that is not a list) is decoded eagerly instead, so every check and error of the eager
path still applies to it. The skim is not a full validation: a body whose skipped parts msgspec
accepts and orjson refuses (an invalid UTF-8 byte inside a string, a number beyond a double) is
found when the page is decoded, and raised there as a `ServiceError` naming the endpoint.
`Page.from_body` reads a skimmed body as it reads a decoded one.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator, Sequence
from typing import Any, overload

import msgspec
import orjson

from service.errors import ServiceError

Record = dict[str, Any]


def loads(data: bytes) -> Any:
    """orjson.loads with the cyclic GC paused: a page of reservation details is ~20k fresh
    dicts, which trigger dozens of collections that scan the whole heap for cycles that JSON
    cannot contain (+70 % parse time with a live heap). The GC is left as it was found."""
    if not gc.isenabled():
        return orjson.loads(data)
    gc.disable()
    try:
        return orjson.loads(data)
    finally:
        gc.enable()


class LazyRecords(Sequence[Record]):
    """The records of one page: counted and keyed on arrival, decoded on first use.

    Behaves as a read-only list of dicts. `key_values` holds each record's value of the key field
    the page was read with (None where a record lacks it), in page order, without decoding.
    """

    __slots__ = ("_body", "_count", "_records", "endpoint", "key_values", "nbytes")

    def __init__(self, body: bytes, count: int, keys: list[Any], endpoint: str) -> None:
        self._body: bytes | None = body
        self._records: list[Record] | None = None
        self._count = count
        self.key_values = keys
        self.endpoint = endpoint
        self.nbytes = len(body)  # the JSON body's size, a measure of the work decoding it is

    def records(self) -> list[Record]:
        """The page's records as a list (decoded now if not yet; the bytes are then dropped)."""
        if self._records is None:
            assert self._body is not None
            try:
                body = loads(self._body)
            except orjson.JSONDecodeError as exc:
                raise ServiceError(
                    f"GET {self.endpoint}: a page that arrived whole is not valid JSON ({exc}); "
                    "the service sent a malformed body - run again, and report it if it repeats",
                    endpoint=self.endpoint,
                ) from exc
            # as `Page.from_body` reads it: a page without `content` has no records
            content = (body.get("content") or []) if isinstance(body, dict) else body
            if not isinstance(content, list) or len(content) != self._count:
                # only if msgspec and orjson read the same bytes differently (e.g. a repeated
                # `content` key): the records counted are not the records decoded
                found = len(content) if isinstance(content, list) else "no list"
                raise ServiceError(
                    f"GET {self.endpoint}: the page's records decode to {found} where "
                    f"{self._count} were counted on arrival; the body is ambiguous JSON",
                    endpoint=self.endpoint,
                )
            self._records = content
            self._body = None
        return self._records

    def body(self) -> bytes | None:
        """The page's JSON while it is undecoded (None once decoded), for a reader that decodes
        it its own way (`assets.typed`) and leaves it undecoded."""
        return self._body

    def fingerprint(self) -> bytes:
        """Equal for two answers carrying the same records (keys, else the body or the ends)."""
        keys = self.key_values
        if keys and (keys[0] is not None or keys[-1] is not None):
            return repr((keys[0], keys[-1])).encode()
        if self._body is not None:
            return self._body
        records = self.records()
        return orjson.dumps([records[0], records[-1]]) if records else b""

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    @overload
    def __getitem__(self, index: int) -> Record: ...
    @overload
    def __getitem__(self, index: slice) -> list[Record]: ...
    def __getitem__(self, index: int | slice) -> Record | list[Record]:
        return self.records()[index]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRecords):
            other = other.records()
        if isinstance(other, list):
            return self.records() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list's semantics: mutable content, no hash

    def __reduce__(self) -> tuple[Any, ...]:
        # Undecoded pages travel as their bytes: the receiver decodes, the sender never does.
        if self._records is None:
            return (LazyRecords, (self._body, self._count, self.key_values, self.endpoint))
        return (list, (self._records,))

    def __repr__(self) -> str:
        state = "decoded" if self._records is not None else f"{len(self._body or b'')} bytes"
        return f"LazyRecords({self._count} records of {self.endpoint}, {state})"


_ENVELOPE_INTS = ("size", "number", "totalElements", "totalPages", "numberOfElements")


@functools.cache
def _decoder(key: str | None) -> msgspec.json.Decoder[Any]:
    """A decoder of a page that keeps only the envelope and each record's `key` field."""
    item_fields: list[tuple[str, Any, Any]] = [("key", Any, None)] if key else []
    item = msgspec.defstruct(
        "SkimmedRecord",
        item_fields,
        rename={"key": key} if key else None,
        forbid_unknown_fields=False,
    )
    envelope = msgspec.defstruct(
        "SkimmedPage",
        [("content", list[item] | None | msgspec.UnsetType, msgspec.UNSET)]  # type: ignore[valid-type]
        + [(name, Any, None) for name in (*_ENVELOPE_INTS, "last")],
        forbid_unknown_fields=False,
    )
    return msgspec.json.Decoder(envelope | list[item])  # type: ignore[valid-type]


def skim(body: bytes, key: str | None, endpoint: str) -> dict[str, Any] | LazyRecords | None:
    """`body` as the eager decode would give it, but with the records left undecoded: the
    envelope with `LazyRecords` as its `content` (a bare array: the `LazyRecords` itself), for
    `Page.from_body`. None when the skim cannot vouch for the page (not readable, a `content`
    that is null, a `numberOfElements` that is not the count): the caller then decodes it
    eagerly, whose checks say what is wrong."""
    try:
        page = _decoder(key).decode(body)
    except msgspec.MsgspecError:
        return None
    if isinstance(page, list):
        keys = [item.key for item in page] if key else [None] * len(page)
        return LazyRecords(body, len(page), keys, endpoint)
    if page.content is None:
        return None
    items = [] if page.content is msgspec.UNSET else page.content
    declared = page.numberOfElements
    if isinstance(declared, int) and declared != len(items):
        return None
    keys = [item.key for item in items] if key else [None] * len(items)
    envelope: dict[str, Any] = {"content": LazyRecords(body, len(items), keys, endpoint)}
    for name in (*_ENVELOPE_INTS, "last"):
        value = getattr(page, name)
        if value is not None:
            envelope[name] = value
    return envelope
