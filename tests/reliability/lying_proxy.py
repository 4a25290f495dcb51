"""A reverse proxy in front of the sandbox that lies the way real services do.

It forwards every request to the sandbox and rewrites JSON page bodies on the way back:
wrong totals (the page's own count, capped, negative, zero), a bare array instead of the page
envelope, `last: true` on every page, and a list that silently ends after its first page. The
pipeline must either fail with a message or leave the lake equal to a clean load; it must never
exit 0 with rows lost (issue "Nothing lost when the service lies").
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

Body = dict[str, Any]
Lie = Callable[[Request, Body], Any]  # a page body in, the body to send out


def _totals(total: Callable[[Body], int]) -> Lie:
    def lie(request: Request, body: Body) -> Any:
        reported = total(body)
        size = body.get("size") or len(body.get("content") or []) or 1
        return {
            **body,
            "totalElements": reported,
            "totalPages": max(reported, 0) // size + (1 if max(reported, 0) % size else 0),
        }

    return lie


def _bare(request: Request, body: Body) -> Any:
    return body.get("content", [])


def _always_last(request: Request, body: Body) -> Any:
    return {**body, "last": True}


def _ends_after_first_page(path_part: str) -> Lie:
    """Lists whose path contains `path_part` answer empty pages after their first one."""

    def lie(request: Request, body: Body) -> Any:
        if path_part not in request.url.path:
            return body
        first = request.query_params.get("page", "0") == "0" and not any(
            ">" in f or "<" in f for f in request.query_params.getlist("filter")
        )
        if first:
            return body
        return {**body, "content": [], "numberOfElements": 0, "last": True}

    return lie


LIES: dict[str, Lie] = {
    "own-count": _totals(lambda b: len(b.get("content") or [])),
    "capped-250": _totals(lambda b: min(int(b.get("totalElements") or 0), 250)),
    "negative": _totals(lambda b: -1),
    "zero": _totals(lambda b: 0),
    "bare-array": _bare,
    "always-last": _always_last,
}
# Lies that lose data no client can see on a first load; against a loaded lake they must be
# refused (the removal guard), never landed.
DATA_LIES: dict[str, Lie] = {
    "details-end-after-page-0": _ends_after_first_page("/reservations/details"),
}


def _app(upstream: str, lie: Lie, counts: dict[str, int]) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=60)

    async def forward(request: Request) -> Response:
        url = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")
        }
        answer = await client.request(
            request.method, url, headers=headers, content=await request.body()
        )
        body = answer.content
        out_headers = {
            k: v
            for k, v in answer.headers.items()
            if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")
        }
        if (
            request.method == "GET"
            and answer.status_code == 200
            and answer.headers.get("content-type", "").startswith("application/json")
        ):
            data = orjson.loads(body)
            if isinstance(data, dict) and isinstance(data.get("content"), list):
                lied = lie(request, data)
                if lied != data:
                    counts["lies"] = counts.get("lies", 0) + 1
                body = orjson.dumps(lied)
        return Response(body, status_code=answer.status_code, headers=out_headers)

    return Starlette(
        routes=[Route("/{path:path}", forward, methods=["GET", "POST", "PUT", "DELETE"])]
    )


@contextmanager
def lying_proxy(upstream: str, lie: Lie) -> Iterator[tuple[str, dict[str, int]]]:
    """Serve the proxy on loopback; yields (its base URL, counts of lies told)."""
    parts = httpx.URL(upstream)
    origin = f"{parts.scheme}://{parts.host}:{parts.port}"
    counts: dict[str, int] = {}
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # Like a proxy, it forwards the service's Date header instead of adding its own clock's.
    config = uvicorn.Config(
        _app(origin, lie, counts), log_level="warning", lifespan="off", date_header=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the lying proxy did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}{parts.path}", counts
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
