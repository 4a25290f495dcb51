"""Filter, sort and paging for the sandbox's list endpoints, as pure functions.

The service's query language (docs/contracts.md, "Conventions") is parsed once per request into
predicates compiled against the field types of the collection, so that a scan over 1.5M records
costs one closure call per record and condition. Primary-key conditions are also turned into a
`KeyPlan`, which lets the server answer keyset paging (`pk>x`, `pk:[ids]`, sorted by pk) with
bisect on the sorted keys instead of a scan.

Semantics, per field type (types are inferred from the records, see `infer_types`):
- strings: `:` contains (case-insensitive), `::` equals exactly, `!:` differs exactly,
  `>`/`>:`/`<`/`<:` compare lexicographically;
- ints, numbers: `:` and `::` equal, `!:` differs, comparisons numeric;
- booleans: `:`, `::`, `!:` only;
- dates and datetimes (ISO strings): `:` is a prefix match (so `eventDate:2026-03-01` selects a
  day), `::` equals, comparisons lexicographic (correct for ISO strings);
- arrays of scalars: `:` means "contains the value";
- `field:[a,b]` / `field::[a,b]` is membership, `field!:[a,b]` its negation;
- the value `null` tests for null with `:`, `::` and `!:`;
- a null field never satisfies a comparison.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from itertools import islice
from typing import Any

Record = dict[str, Any]
Predicate = Callable[[Record], bool]

DEFAULT_PAGE_SIZE = 20
TYPE_SAMPLE_SIZE = 200

INT, NUMBER, BOOL, DATE, DATETIME, STRING, ARRAY, OBJECT, UNKNOWN = (
    "int",
    "number",
    "bool",
    "date",
    "datetime",
    "string",
    "array",
    "object",
    "unknown",
)

# Longest operators first: `::` before `:`, `>:` before `>`, `!:` before `:`.
_TERM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.\[\]]*?)\s*(::|!:|>:|<:|:|>|<)(.*)$", re.DOTALL)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T")
COMPARISONS = {">", ">:", "<", "<:"}
LIVE_OP = "~live"  # internal: null or greater than the value (used for x-show-archived)


class QueryError(ValueError):
    """A filter, sort or paging parameter the server cannot honour; answered with 400."""

    def __init__(self, message: str, code: str = "INVALID_FILTER") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Condition:
    """One `field op value` term, the value already typed (a tuple for list values)."""

    field: str
    op: str  # ":", "::", "!:", ">", ">:", "<", "<:", "in", "notin", LIVE_OP
    value: Any


# A filter is an AND of OR-groups: each repeated `filter` parameter is one group.
Filters = list[list[Condition]]


@dataclass(frozen=True)
class SortOrder:
    property: str
    descending: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "direction": "DESC" if self.descending else "ASC",
            "property": self.property,
            "ignoreCase": False,
            "nullHandling": "NATIVE",
            "ascending": not self.descending,
            "descending": self.descending,
        }


def sort_entry(orders: Sequence[SortOrder], *, as_object: bool = False) -> dict[str, Any]:
    """The envelope's `sort`: a list of the orders (contracts.md), or, `as_object` (the strict
    profile, real-service-notes section 0), the first order's object, present only when sorted."""
    if not as_object:
        return {"sort": [order.as_dict() for order in orders]}
    return {"sort": orders[0].as_dict()} if orders else {}


@dataclass
class Selection:
    content: Sequence[Record]
    total: int


# ---------------------------------------------------------------------------------------------
# Types


def value_type(value: Any) -> str:
    """The query type of one JSON value (bool before int: bool is an int subclass)."""
    if value is None:
        return UNKNOWN
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return NUMBER
    if isinstance(value, str):
        if _DATE_RE.match(value):
            return DATE
        if _DATETIME_RE.match(value):
            return DATETIME
        return STRING
    if isinstance(value, list | tuple):
        return ARRAY
    if isinstance(value, dict):
        return OBJECT
    return STRING


def infer_types(records: Iterable[Record], limit: int = TYPE_SAMPLE_SIZE) -> dict[str, str]:
    """Field -> type from a sample; ints widen to number, a field seen only as null is UNKNOWN."""
    types: dict[str, str] = {}
    for record in islice(records, limit):
        for name, value in record.items():
            seen = types.get(name, UNKNOWN)
            found = value_type(value)
            if found == UNKNOWN:
                types.setdefault(name, UNKNOWN)
            elif seen == UNKNOWN:
                types[name] = found
            elif {seen, found} == {INT, NUMBER}:
                types[name] = NUMBER
            elif {seen, found} == {DATE, DATETIME} or (seen != found and STRING in (seen, found)):
                types[name] = STRING if STRING in (seen, found) else DATETIME
    return types


def _guess_type(raw: str) -> str:
    """Type of a literal for a field whose records were all null in the sample."""
    for kind, convert in ((INT, int), (NUMBER, float)):
        try:
            convert(raw)
        except ValueError:
            continue
        return kind
    if raw.lower() in ("true", "false"):
        return BOOL
    return value_type(raw)


def coerce(raw: str, kind: str, name: str) -> Any:
    """Turn a filter literal into a value comparable with the field's values (QueryError if not)."""
    text = raw.strip()
    if text.lower() == "null":
        return None
    try:
        if kind == INT:
            return int(text)
        if kind == NUMBER:
            number = float(text)
            if number != number or number in (float("inf"), float("-inf")):
                raise ValueError(text)
            return number
    except ValueError:
        noun = "an integer" if kind == INT else "a number"
        raise QueryError(f"filter value {raw!r} for field {name!r} is not {noun}") from None
    if kind == BOOL:
        if text.lower() not in ("true", "false"):
            raise QueryError(f"filter value {raw!r} for field {name!r} is not a boolean")
        return text.lower() == "true"
    if kind in (DATE, DATETIME):
        if not re.match(r"^\d{4}-\d{2}-\d{2}", text):
            raise QueryError(f"filter value {raw!r} for field {name!r} is not a date (yyyy-MM-dd)")
        try:
            date.fromisoformat(text[:10])
        except ValueError:
            raise QueryError(
                f"filter value {raw!r} for field {name!r} is not a valid date"
            ) from None
        return text
    if kind == ARRAY:
        return coerce(raw, _guess_type(text), name)
    return raw


# ---------------------------------------------------------------------------------------------
# Filters


def parse_term(term: str) -> tuple[str, str, str]:
    """Split `field op value`; operators are matched longest first."""
    match = _TERM.match(term)
    if match is None:
        raise QueryError(f"malformed filter term {term!r}: expected field, operator and value")
    name, op, raw = match.group(1), match.group(2), match.group(3)
    if "." in name or "[" in name:
        raise QueryError(f"filter on nested field {name!r} is not supported")
    if raw == "":
        raise QueryError(f"filter term {term!r} has no value")
    return name, op, raw


def compile_filter(expr: str, types: Mapping[str, str]) -> list[Condition]:
    """One `filter` parameter: an OR chain of terms, typed against `types`."""
    if not expr.strip():
        raise QueryError("empty filter")
    group: list[Condition] = []
    for term in expr.split("||"):
        name, op, raw = parse_term(term)
        if name not in types:
            raise QueryError(f"unknown filter field {name!r}")
        kind = types[name]
        if kind == UNKNOWN:
            kind = _guess_type(raw.strip().strip("[]").split(",")[0].strip())
        if kind == OBJECT:
            raise QueryError(f"filter on nested field {name!r} is not supported")
        stripped = raw.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            if op not in (":", "::", "!:"):
                raise QueryError(f"operator {op!r} does not take a list (field {name!r})")
            items = [item for item in stripped[1:-1].split(",") if item.strip()]
            if not items:
                raise QueryError(f"empty value list for field {name!r}")
            values = frozenset(coerce(item, kind, name) for item in items)
            group.append(Condition(name, "notin" if op == "!:" else "in", values))
            continue
        value = coerce(raw, kind, name)
        if op in COMPARISONS and value is None:
            raise QueryError(f"cannot compare field {name!r} with null")
        if op in COMPARISONS and kind in (BOOL, ARRAY):
            raise QueryError(f"operator {op!r} is not supported on {kind} field {name!r}")
        if kind == ARRAY and op != ":":
            raise QueryError(f"only ':' (contains) is supported on array field {name!r}")
        group.append(Condition(name, op, value))
    return group


def compile_filters(exprs: Sequence[str], types: Mapping[str, str]) -> Filters:
    """Repeated `filter` parameters: all groups must match (AND)."""
    return [compile_filter(expr, types) for expr in exprs]


def predicate(cond: Condition, kind: str) -> Predicate:
    """A fast closure for one condition; `kind` is the field's type."""
    name, op, value = cond.field, cond.op, cond.value
    if op == "in":
        return lambda r: r.get(name) in value
    if op == "notin":
        return lambda r: r.get(name) not in value
    if op == LIVE_OP:
        return lambda r: (x := r.get(name)) is None or x > value
    if value is None:
        if op == "!:":
            return lambda r: r.get(name) is not None
        return lambda r: r.get(name) is None
    if op == ":":
        if kind == STRING:
            needle = value.lower()
            return lambda r: isinstance(x := r.get(name), str) and needle in x.lower()
        if kind in (DATE, DATETIME):
            return lambda r: isinstance(x := r.get(name), str) and x.startswith(value)
        if kind == ARRAY:
            return lambda r: value in (r.get(name) or ())
        return lambda r: r.get(name) == value
    if op == "::":
        return lambda r: r.get(name) == value
    if op == "!:":
        return lambda r: r.get(name) != value
    if op == ">":
        return lambda r: (x := r.get(name)) is not None and x > value
    if op == ">:":
        return lambda r: (x := r.get(name)) is not None and x >= value
    if op == "<":
        return lambda r: (x := r.get(name)) is not None and x < value
    if op == "<:":
        return lambda r: (x := r.get(name)) is not None and x <= value
    raise QueryError(f"unknown operator {op!r}")


def build_predicate(filters: Filters, types: Mapping[str, str]) -> Predicate | None:
    """One predicate for AND-of-OR filters; None when there is nothing to test."""
    groups: list[Predicate] = []
    for group in filters:
        preds = [predicate(c, types.get(c.field, UNKNOWN)) for c in group]
        if len(preds) == 1:
            groups.append(preds[0])
        else:
            groups.append(lambda r, ps=tuple(preds): any(p(r) for p in ps))
    if not groups:
        return None
    if len(groups) == 1:
        return groups[0]
    if len(groups) == 2:
        first, second = groups
        return lambda r: first(r) and second(r)
    return lambda r, gs=tuple(groups): all(g(r) for g in gs)


# ---------------------------------------------------------------------------------------------
# Sort and paging


def parse_sort(values: Sequence[str], types: Mapping[str, str]) -> list[SortOrder]:
    """`sort=field`, `sort=field,asc|desc`, `sort=a,b,desc` (Spring style), repeatable."""
    orders: list[SortOrder] = []
    for value in values:
        tokens = [t.strip() for t in value.split(",") if t.strip()]
        if not tokens:
            raise QueryError("empty sort parameter", code="INVALID_SORT")
        descending = False
        if len(tokens) > 1 and tokens[-1].lower() in ("asc", "desc"):
            descending = tokens.pop().lower() == "desc"
        for name in tokens:
            if name.lower() in ("asc", "desc"):
                raise QueryError(f"sort parameter {value!r} has no field", code="INVALID_SORT")
            if name not in types:
                raise QueryError(f"unknown sort field {name!r}", code="INVALID_SORT")
            if types[name] in (ARRAY, OBJECT):
                raise QueryError(f"cannot sort on nested field {name!r}", code="INVALID_SORT")
            orders.append(SortOrder(name, descending))
    return orders


def sort_records(records: list[Record], orders: Sequence[SortOrder]) -> None:
    """Sort in place, stable, nulls lowest (first ascending, last descending)."""
    for order in reversed(orders):
        name = order.property
        records.sort(
            key=lambda r: (0, 0) if (x := r.get(name)) is None else (1, x),
            reverse=order.descending,
        )
