"""`_extra`: the fields of a record that the lake's schema does not know, kept per row as JSON
(never silently dropped) and counted per table and field for the run's report; a field that
looks like personal data never lands there unless PII is allowed (it is counted as dropped)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

from assets.columns import Plan

PII_NAME = re.compile(
    r"name|mail|phone|mobile|address|street|zip|birth|iban|passport", re.IGNORECASE
)


def extras(
    plan: Plan,
    rows: Sequence[Any] | None,
    include_pii: bool,
    unknown: Counter[str],
    dropped: Counter[str],
) -> list[str | None] | None:
    """`_extra` JSON per row: fields the schema does not know (never silently dropped).

    None when no row has one (the common case, checked at C speed; and always for a typed
    read, which refuses unknown fields)."""
    if rows is None:
        return None
    known = plan.known
    dicts = set(map(type, rows)) <= {dict}
    if dicts and all(map(known.issuperset, rows)) and not plan.sub_known:
        return None
    extra_rows: list[dict[str, Any] | None] = [None] * len(rows)
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            continue
        extra: dict[str, Any] | None = None
        if not known.issuperset(r):
            extra = {k: v for k, v in r.items() if k not in known}
        for head, sub_known in plan.sub_known.items():
            obj = r.get(head)
            if isinstance(obj, dict) and not sub_known.issuperset(obj):
                extra = extra or {}
                for k, v in obj.items():
                    if k not in sub_known:
                        extra[f"{head}.{k}"] = v
        extra_rows[i] = extra
    if not any(extra_rows):
        return None
    name = plan.table.name
    drop_pii = plan.personal and not include_pii
    out: list[str | None] = [None] * len(extra_rows)
    for i, extra in enumerate(extra_rows):
        if not extra:
            continue
        for k in list(extra):
            unknown[f"{name}.{k}"] += 1
            if drop_pii and PII_NAME.search(k):
                dropped[f"{name}.{k}"] += 1
                del extra[k]
        if extra:
            out[i] = orjson.dumps(extra, default=str).decode()
    return out
