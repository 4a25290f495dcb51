"""Record request/response pairs to JSONL and replay them without a network.

`RecordingTransport(inner, path)` wraps a real transport and appends one line per exchange:
method, URL path with sorted query, status, a few headers, body text. Authorization headers and
request bodies (the credential form) are never written. `ReplayTransport(path)` is an
`httpx.MockTransport` answering from that file: exchanges for the same request are served in
recorded order, the last one repeating, and an unknown request gets 599 (a loud test failure).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

KEPT_HEADERS = ("content-type", "retry-after")


def request_key(method: str, url: httpx.URL | str) -> str:
    """Method + path + query with parameters sorted, so equivalent requests match."""
    url = httpx.URL(str(url))
    query = sorted(parse_qsl(url.query.decode("ascii"), keep_blank_values=True))
    path = url.path
    return f"{method.upper()} {path}" + (f"?{urlencode(query)}" if query else "")


class RecordingTransport(httpx.AsyncBaseTransport):
    """Passes requests to `inner` and appends each exchange to a JSONL file."""

    def __init__(self, inner: httpx.AsyncBaseTransport, path: str | Path):
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        line = {
            "key": request_key(request.method, request.url),
            "status": response.status_code,
            "headers": {k: v for k, v in response.headers.items() if k.lower() in KEPT_HEADERS},
            "body": body.decode("utf-8", errors="replace"),
        }
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        return httpx.Response(
            response.status_code, headers=response.headers, content=body, request=request
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class ReplayTransport(httpx.MockTransport):
    """A MockTransport that answers from a recording made by RecordingTransport."""

    def __init__(self, path: str | Path):
        self._answers: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._lock = threading.Lock()
        with Path(path).open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    entry = json.loads(line)
                    self._answers[entry["key"]].append(entry)
        super().__init__(self._answer)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        key = request_key(request.method, request.url)
        with self._lock:
            queue = self._answers.get(key)
            if not queue:
                return httpx.Response(599, json={"message": f"no recording for {key}"})
            entry = queue.popleft() if len(queue) > 1 else queue[0]
        return httpx.Response(
            entry["status"], headers=entry["headers"], content=entry["body"].encode("utf-8")
        )
