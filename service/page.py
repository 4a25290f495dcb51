"""One page of a paged list (`Page`): the records and the envelope fields the server actually
sent, and what they say: the page size the server used, whether the page ends the list, and a
signature that tells it from the page before (`service.paging` reads whole lists of them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from service.errors import ServiceError
from service.lazy import LazyRecords

Record = dict[str, Any]


@dataclass(frozen=True)
class Page:
    """One response of a paged list, with the envelope fields the server actually sent."""

    content: list[Record] | LazyRecords
    size: int | None = None
    number: int | None = None
    total_elements: int | None = None
    total_pages: int | None = None
    last: bool | None = None

    @classmethod
    def from_body(cls, body: Any, status: int = 200) -> Page:
        if status == 204 or body is None:
            return cls(content=[], last=True, total_elements=0, total_pages=0)
        if isinstance(body, list | LazyRecords):  # a bare array, decoded or skimmed
            return cls(content=body)  # no envelope: the data decides where the list ends
        if not isinstance(body, dict):
            raise ServiceError(f"unexpected page body of type {type(body).__name__}")
        content = body.get("content")
        if not isinstance(content, LazyRecords):  # a skimmed page stays undecoded, empty or not
            content = content or []

        def as_int(name: str) -> int | None:
            value = body.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        last = body.get("last")
        return cls(
            content=content,
            size=as_int("size"),
            number=as_int("number"),
            total_elements=as_int("totalElements"),
            total_pages=as_int("totalPages"),
            last=last if isinstance(last, bool) else None,
        )

    def effective_size(self, asked: int) -> int:
        """The page size the server used: its `size`, else what we asked (never below a page)."""
        if self.size and self.size > 0:
            return self.size
        return asked

    def ends_list(self, size: int) -> bool:
        """An empty or short page ends a list; a full one only when `last` and the total agree
        with it. A full page marked last whose total says more (or a bare array) is read on,
        at the cost of one empty page when the list really ends on a full one."""
        if not self.content or len(self.content) < size:
            return True
        told = self.total_elements
        return self.last is True and told is not None and 0 <= told <= len(self.content)

    def signature(self) -> tuple[int, bytes]:
        """Tells a page from the one before it when a service ignores the page number."""
        content = self.content
        if isinstance(content, LazyRecords):
            return len(content), content.fingerprint()
        if not content:
            return 0, b""
        return len(content), orjson.dumps([content[0], content[-1]])
