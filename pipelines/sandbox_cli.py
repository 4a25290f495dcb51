"""`reservoir sandbox advance`: move a running sandbox's clock over its admin URL (HTTP only:
the command imports nothing of `sandbox/`)."""

from __future__ import annotations

from typing import Annotated

import typer

from pipelines.cli_support import fail as _fail


def sandbox_advance(
    hours: Annotated[float, typer.Option(help="How far to move the sandbox clock.")] = 1.0,
    url: Annotated[
        str, typer.Option(help="Admin URL of a running sandbox.")
    ] = "http://127.0.0.1:8765/_admin",
) -> None:
    """Move a running sandbox's clock forward: bookings, changes, events and webhooks happen."""
    import httpx

    try:
        response = httpx.post(f"{url.rstrip('/')}/advance", params={"hours": hours}, timeout=600)
    except httpx.HTTPError as exc:
        raise _fail(
            f"could not reach the sandbox at {url} ({type(exc).__name__}); start it with `reservoir sandbox serve`."
        ) from None
    if response.status_code != 200:
        raise _fail(
            f"the sandbox refused to advance: HTTP {response.status_code} {response.text[:200]}"
        )
    typer.echo(response.text)
