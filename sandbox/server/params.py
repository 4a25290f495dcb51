"""Query and body parameter parsing shared by handlers; bad values raise `ApiError` (400)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from starlette.requests import Request

from sandbox.server.common import ApiError


def _ids(values: Sequence[str], name: str) -> list[int]:
    """`1,2,3`, `[1,2]` or repeated parameters -> ints (400 on anything else)."""
    out: list[int] = []
    for value in values:
        for item in value.strip().strip("[]").split(","):
            if item.strip():
                try:
                    out.append(int(item))
                except ValueError:
                    raise ApiError(400, "INVALID_PARAMETER", f"{name} must be integers") from None
    return out


def _sections(request: Request, allowed: Sequence[str]) -> set[str]:
    values = request.query_params.getlist("returnSections")
    if not values:
        return set(allowed)
    sections = {s.strip().upper() for v in values for s in v.split(",") if s.strip()}
    unknown = sections - set(allowed)
    if unknown:
        raise ApiError(
            400,
            "INVALID_PARAMETER",
            f"unknown returnSections {sorted(unknown)}; allowed: {list(allowed)}",
        )
    return sections


def _date(value: Any, name: str) -> date:
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ApiError(400, "INVALID_PARAMETER", f"{name} must be a date (yyyy-MM-dd)") from None


def _int(value: Any, name: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ApiError(400, "INVALID_PARAMETER", f"{name} must be an integer") from None


def _int_list(value: Any, name: str) -> list[int] | None:
    if value in (None, "", []):
        return None
    if isinstance(value, list):
        return [v for v in (_int(v, name) for v in value) if v is not None]
    return _ids([str(value)], name)
