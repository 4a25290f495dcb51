"""Areas the sandbox's client may not read: a permission not granted (403) or a module not
enabled for the concern (404).

The real service decides per API user which areas its credentials cover (real-service-notes.md
section 0: keys bound to a channel, release-status limits; its 403 behaviour and error body are
not documented, so the body here is the sandbox's usual error shape). An area is the first
segment of a path under /service/v2 (`owners`, `add-ons`, `companies`, `cashreservations`...):
every path below it is refused alike, lists, details and per-record paths. The sandbox has one
client, so this is that client's (SandboxSettings.refused_areas, or POST /_admin/areas).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

REFUSAL_STATUSES = (403, 404)


class AreaRefusals:
    """The areas refused to the sandbox's client (area -> 403 or 404), changeable at runtime."""

    def __init__(self, refused: Mapping[str, int] | None = None) -> None:
        self._lock = threading.Lock()
        self._refused: dict[str, int] = {}
        self.configure(refused or {})

    def configure(self, refused: Mapping[str, int]) -> dict[str, int]:
        """Refuse exactly these areas from now on (an empty mapping: none)."""
        clean: dict[str, int] = {}
        for area, status in refused.items():
            area = str(area).strip("/").lower()
            if not area or "/" in area:
                raise ValueError(f"an area is one path segment (owners, add-ons), not {area!r}")
            if int(status) not in REFUSAL_STATUSES:
                raise ValueError(f"an area is refused with 403 or 404, not {status!r}")
            clean[area] = int(status)
        with self._lock:
            self._refused = clean
        return dict(clean)

    def describe(self) -> dict[str, int]:
        with self._lock:
            return dict(self._refused)

    def decide(self, path: str, client_id: str, scope: str) -> tuple[int, str, str] | None:
        """(status, code, message) refusing `path` (below the service prefix), or None."""
        area = path.strip("/").split("/", 1)[0].lower()
        with self._lock:
            status = self._refused.get(area)
        if status is None:
            return None
        if status == 403:
            return 403, "FORBIDDEN", f"the API user {client_id} has no permission for {area}"
        return 404, "NOT_FOUND", f"{area} is not enabled for concern {scope}"
