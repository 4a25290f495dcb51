"""Typed builder for the service's `filter` query parameter, and id-list batching.

Syntax (interface, "Filtering"): `field<op>value` with ops `:` contains, `::` strict equals,
`!:` not equals, `>`, `>:`, `<`, `<:`; `a:x||b:y` is an OR chain inside one parameter; repeating
the `filter` parameter ANDs them; `field:[v1,v2]` is a list. Values are rendered in the service's
formats (dates `yyyy-MM-dd`, datetimes UTC `yyyy-MM-ddTHH:mm:ss.SSS`); percent-encoding is left to
httpx, which encodes the operator characters in query values.

    where = Filter.of(F("status") >= 12, F("arrivalDate") < date(2026, 1, 1))
    where = where.and_(F("categoryCode").strict("GUEST") | F("categoryCode").strict("GROUP"))
    params = {"filter": where.params()}
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any
from urllib.parse import quote


class Op(StrEnum):
    CONTAINS = ":"
    STRICT = "::"
    NOT = "!:"
    GT = ">"
    GE = ">:"
    LT = "<"
    LE = "<:"


_FORBIDDEN_IN_VALUE = ("||",)
_FORBIDDEN_IN_LIST_ITEM = (",", "[", "]", "||")


def format_value(value: Any) -> str:
    """Render one filter value the way the service writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, StrEnum):
        value = value.value
    text = str(value)
    for bad in _FORBIDDEN_IN_VALUE:
        if bad in text:
            raise ValueError(f"filter value {text!r} contains {bad!r}, which the syntax reserves")
    return text


def format_list(values: Iterable[Any]) -> str:
    """Render `[v1,v2,...]`; items may not contain the list syntax characters."""
    items = []
    for v in values:
        text = format_value(v)
        if any(bad in text for bad in _FORBIDDEN_IN_LIST_ITEM):
            raise ValueError(f"list filter item {text!r} contains a reserved character")
        items.append(text)
    if not items:
        raise ValueError("an id list filter needs at least one value")
    return "[" + ",".join(items) + "]"


def _check_field(name: str) -> str:
    if not name or not name.replace("_", "").replace(".", "").isalnum():
        raise ValueError(f"invalid filter field name {name!r}")
    return name


@dataclass(frozen=True)
class Condition:
    """One `field<op>value` term."""

    field: str
    op: Op
    value: Any

    def render(self) -> str:
        if isinstance(self.value, (list, tuple, set, frozenset, range)):
            if self.op is not Op.CONTAINS:
                raise ValueError("a value list only works with ':'")
            values = sorted(self.value) if isinstance(self.value, (set, frozenset)) else self.value
            return f"{self.field}{self.op.value}{format_list(values)}"
        return f"{self.field}{self.op.value}{format_value(self.value)}"

    def __or__(self, other: Condition | AnyOf) -> AnyOf:
        return AnyOf((self,)) | other

    def __str__(self) -> str:
        return self.render()


@dataclass(frozen=True)
class AnyOf:
    """An OR chain `a:x||b:y` (one filter parameter)."""

    conditions: tuple[Condition, ...]

    def __or__(self, other: Condition | AnyOf) -> AnyOf:
        extra = other.conditions if isinstance(other, AnyOf) else (other,)
        return AnyOf(self.conditions + extra)

    def render(self) -> str:
        if not self.conditions:
            raise ValueError("empty OR chain")
        return "||".join(c.render() for c in self.conditions)

    def __str__(self) -> str:
        return self.render()


Term = Condition | AnyOf


class F:
    """A filterable field; comparison operators and methods build Conditions."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = _check_field(name)

    def contains(self, value: Any) -> Condition:
        """`:` - text contains, number equals."""
        return Condition(self.name, Op.CONTAINS, value)

    eq = contains

    def strict(self, value: Any) -> Condition:
        """`::` - exactly equal."""
        return Condition(self.name, Op.STRICT, value)

    def ne(self, value: Any) -> Condition:
        """`!:` - differs."""
        return Condition(self.name, Op.NOT, value)

    def isin(self, values: Iterable[Any]) -> Condition:
        """`:[v1,v2]` - one of the values."""
        return Condition(self.name, Op.CONTAINS, tuple(values))

    def __gt__(self, value: Any) -> Condition:  # type: ignore[override]
        return Condition(self.name, Op.GT, value)

    def __ge__(self, value: Any) -> Condition:  # type: ignore[override]
        return Condition(self.name, Op.GE, value)

    def __lt__(self, value: Any) -> Condition:  # type: ignore[override]
        return Condition(self.name, Op.LT, value)

    def __le__(self, value: Any) -> Condition:  # type: ignore[override]
        return Condition(self.name, Op.LE, value)

    def __repr__(self) -> str:
        return f"F({self.name!r})"


@dataclass(frozen=True)
class Filter:
    """An AND of terms; each term becomes one repeated `filter` query parameter."""

    terms: tuple[Term, ...] = ()

    @classmethod
    def of(cls, *terms: Term | str) -> Filter:
        return cls().and_(*terms)

    def and_(self, *terms: Term | str | Filter | None) -> Filter:
        out = list(self.terms)
        for t in terms:
            if t is None:
                continue
            if isinstance(t, Filter):
                out.extend(t.terms)
            elif isinstance(t, str):
                out.append(_Raw(t))  # type: ignore[arg-type]
            else:
                out.append(t)
        return Filter(tuple(out))

    def params(self) -> list[str]:
        return [t.render() for t in self.terms]

    def __bool__(self) -> bool:
        return bool(self.terms)


@dataclass(frozen=True)
class _Raw:
    """An already-rendered term (from callers that hold strings)."""

    text: str

    def render(self) -> str:
        return self.text


def encoded_length(text: str) -> int:
    """Length of `text` once percent-encoded as a query value (upper bound of httpx's output)."""
    return len(quote(text, safe=""))


def batch_ids(ids: Iterable[Any], *, budget: int) -> Iterator[list[Any]]:
    """Split ids into batches whose encoded `v1,v2,...` text fits in `budget` characters.

    The caller works out the budget as the safe URL length minus the rest of the URL, so a batch
    never produces an over-long request line. Duplicates are dropped (first occurrence kept).
    """
    if budget < 1:
        raise ValueError("no room left in the URL for an id list")
    seen: set[Any] = set()
    batch: list[Any] = []
    length = 0
    sep = encoded_length(",")
    for value in ids:
        if value in seen:
            continue
        seen.add(value)
        item_len = encoded_length(format_value(value)) + (sep if batch else 0)
        if batch and length + item_len > budget:
            yield batch
            batch, length = [], 0
            item_len -= sep
        batch.append(value)
        length += item_len
    if batch:
        yield batch


def id_list_filter(field: str, ids: Sequence[Any]) -> str:
    """`field:[...]` for one batch."""
    return F(field).isin(ids).render()
