"""What a data check is (`CheckSpec`: a named query on one model selecting the rows that break
its rule) and what running one found (`CheckResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CheckSpec:
    """A named check on one model; `sql` selects the rows that break the rule."""

    name: str
    model: str
    description: str
    sql: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckResult:
    name: str
    model: str
    passed: bool
    failure_count: int
    rows: list[dict[str, Any]]
