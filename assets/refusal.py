"""An optional area the service refused (403: permission not granted; 404: module not enabled),
and the lake's record of the areas refused so far.

Why it is not a failure: the credentials decide which areas a run may read, and an area the
marts can do without (`assets.areas`) should not stop the others from landing. Why it is not
"the area is now empty" either: nothing of the stream lands, so its lake records stay current
(no tombstone, no removal guard). An incremental run skips the refused stream's events; so that
no change is lost, the lake remembers the refused streams (`REFUSED_STATE`) and a later run
reads each of them in full once the service answers again (`assets.modes`), then forgets it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from assets.areas import what_to_do
from assets.endpoints import EndpointSpec
from lake.state import REFUSED_STATE, refused_streams, write_refused_streams
from lake.store import Lake
from service.errors import NotFound, PermissionDenied
from service.streams import leaf_error

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

READ_AGAIN = "read in full again after a refusal: "  # the run's note, then the streams

__all__ = ["REFUSED_STATE", "Refusal", "read_refused", "record_refused", "refusal_of"]


@dataclass(frozen=True)
class Refusal:
    """One stream the service refused in a run, because of its optional area."""

    stream: str
    area: str
    status: int | None  # 403 (permission) or 404 (module); None: its parent stream was refused
    endpoint: str
    said: str  # the client's message (endpoint, status and the service's own words; no secret)
    tables: tuple[str, ...]
    since: str = ""  # batch id of the first run that was refused (kept while it lasts)

    @property
    def what_to_do(self) -> str:
        return what_to_do(self.area, self.status)

    def line(self) -> str:
        """One line for the run summary, the logs and Dagster metadata."""
        kept = ", ".join(self.tables)
        return (
            f"{self.area}: {self.said}; {self.what_to_do}. Not read: {self.stream}; the lake "
            f"keeps what it had of {kept} (nothing removed), read in full once it answers"
        )

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tables": list(self.tables), "what_to_do": self.what_to_do}


def refusal_of(spec: EndpointSpec, error: BaseException) -> Refusal | None:
    """The refusal `error` means for this stream, or None (a core stream, or another error)."""
    leaf = leaf_error(error)
    area = spec.optional_area
    if area is None or not isinstance(leaf, (PermissionDenied, NotFound)):
        return None
    return Refusal(
        stream=spec.name,
        area=area.name,
        status=leaf.status,
        endpoint=leaf.endpoint or spec.source,
        said=str(leaf),
        tables=tuple(t.name for t in spec.tables),
    )


def parent_refused(spec: EndpointSpec, parent: Refusal) -> Refusal | None:
    """An optional stream left unread because a stream it fans out from was refused."""
    if spec.optional_area is None:
        return None
    return Refusal(
        stream=spec.name,
        area=spec.optional_area.name,
        status=parent.status,
        endpoint=spec.source,
        said=f"not asked: it is read per record of {parent.stream}, which was refused",
        tables=tuple(t.name for t in spec.tables),
    )


def read_refused(lake: Lake) -> dict[str, Refusal]:
    """The streams refused by earlier runs and not read in full since (stream -> refusal)."""
    out: dict[str, Refusal] = {}
    for item in refused_streams(lake):
        item.pop("what_to_do", None)
        item["tables"] = tuple(item.get("tables") or ())
        out[item["stream"]] = Refusal(**item)
    return out


def record_refused(
    lake: Lake, batch_id: str, refused: Mapping[str, Refusal], read: Iterable[str]
) -> dict[str, Refusal]:
    """The lake's refused streams after a run: the earlier ones, less those this run read in
    full (`read`), plus those it was refused (keeping when each was first refused). Written
    only when it changed; returns it."""
    before = read_refused(lake)
    after = {k: v for k, v in before.items() if k not in set(read)}
    for name, refusal in refused.items():
        first = before.get(name)
        since = first.since if first is not None and first.since else batch_id
        after[name] = Refusal(**{**asdict(refusal), "since": since})
    if after != before:
        write_refused_streams(lake, batch_id, [r.as_dict() for r in after.values()])
    return after


def refusals_changed(
    lake: Lake, batch_id: str, refused: Mapping[str, Refusal], read: Iterable[str]
) -> set[str]:
    """Record the refused streams after a run (`record_refused`); returns the tables of the
    streams whose refusal began or ended, for the warehouse to rebuild what reads them (and
    rewrite `meta.refused_areas`)."""
    before = read_refused(lake)
    after = record_refused(lake, batch_id, refused, read)
    moved = set(before) ^ set(after)
    return {t for r in (*before.values(), *after.values()) if r.stream in moved for t in r.tables}


def tolerating_refusal(
    stream: str | None = None, default: Any = None, also: tuple[str, ...] = ()
) -> Callable[[F], F]:
    """A step of an open run (`assets.run.ChangeRun`) that reads one stream (`stream`, else
    its first argument): when the service refuses the stream's optional area, the step lands
    nothing, the refusal is recorded in the run's report, and the run goes on (`default` is
    the step's result); the streams it reads per record of that one (`also`) are recorded
    with it. A stream an earlier run was refused (`run.waiting`) is not read here: it is read
    in full after the run."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        async def step(run: Any, *args: Any, **kwargs: Any) -> Any:
            name = stream or args[0]
            if name in run.waiting:
                return default() if callable(default) else default
            try:
                return await method(run, *args, **kwargs)
            except Exception as exc:
                refusal = refusal_of(run.catalogue.by_name[name], exc)
                if refusal is None:
                    raise
                log.info("refused: %s", refusal.line())
                run.report.refused[name] = refusal
                for child in also:
                    spec = run.catalogue.by_name[child]
                    if (unread := parent_refused(spec, refusal)) is not None:
                        run.report.refused[child] = unread
                return default() if callable(default) else default

        return step  # type: ignore[return-value]

    return wrap
