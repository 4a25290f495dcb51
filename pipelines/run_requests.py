"""The service requests a run sent, as `reservoir status` and `reservoir doctor` count them.

The lake step tags its run with the requests its materializations report (`REQUESTS_TAG`), so
that the day's count reads the runs' records alone: summing the materializations' metadata
loaded every event of every run of the day (~2 ms each, ~135 a run), the slowest part of
`reservoir status` (docs/benchmarks.md, "Session 24"). A run recorded before the tag existed is
still counted from its lake materializations (`requests_in`).
"""

from collections.abc import Iterable, Mapping
from typing import Any

REQUESTS_TAG = "reservoir/requests"


def requests_in(metadata: Iterable[Mapping[str, Any]]) -> int:
    """The requests of a run, from its lake materializations' metadata (plain values): each
    stream's `requests_used` once, plus the `run_requests` not made by one stream."""
    streams: dict[str, int] = {}
    extra = 0
    for meta in metadata:
        stream = str(meta.get("stream", ""))
        streams.setdefault(stream, int(meta.get("requests_used", 0) or 0))
        extra += int(meta.get("run_requests", 0) or 0)
    return sum(streams.values()) + extra
