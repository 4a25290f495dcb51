"""The `reservoir sandbox` commands (registered by `pipelines.cli`): `serve` runs the embedded
sandbox in the foreground (`sandbox.runner`, imported only when it runs); `advance` moves a running
sandbox's clock over its admin URL (HTTP only: it imports nothing of `sandbox/`)."""

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


def sandbox_serve(
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0 = a free one).")] = 8765,
    seed: Annotated[int, typer.Option(help="Seed of the simulated business.")] = 7,
    scale: Annotated[str, typer.Option(help="small, medium or large.")] = "small",
    latency_ms: Annotated[int, typer.Option(help="Added latency per request, milliseconds.")] = 0,
    max_page_size: Annotated[
        int, typer.Option(help="Largest page size served; larger requests are clamped.")
    ] = 2000,
    token_ttl: Annotated[int, typer.Option(help="Token lifetime, seconds.")] = 3600,
    max_concurrency: Annotated[
        int, typer.Option(help="Requests in flight per client before 429.")
    ] = 15,
    faults: Annotated[
        list[str] | None,
        typer.Option(
            "--faults",
            help="Opt-in fault with a rate, e.g. --faults http_503=0.05 (repeatable). See docs/sandbox.md.",
        ),
    ] = None,
    webhook_url: Annotated[
        str | None, typer.Option(help="Push reservation webhooks to this URL.")
    ] = None,
    webhook_secret: Annotated[
        str | None, typer.Option(help="whsec_... secret for webhook signatures.")
    ] = None,
    late_event_share: Annotated[
        float,
        typer.Option(
            help="Share of new events that become visible in /events only after a lag "
            "(their ids are issued at once): tests the pipeline's overlap window."
        ),
    ] = 0.0,
    late_event_lag_seconds: Annotated[
        float, typer.Option(help="How long a late event stays hidden (sandbox clock).")
    ] = 300.0,
    profile: Annotated[
        str,
        typer.Option(
            help="default, or strict: behave like the real service wherever its notes speak (field names, 404s, returnSections, optional fields left out). See docs/sandbox.md."
        ),
    ] = "default",
) -> None:
    """Serve the simulated reservation service over HTTP until interrupted."""
    from sandbox.runner import SandboxSettings, serve

    parsed: dict[str, float] = {}
    for item in faults or []:
        name, _, rate = item.partition("=")
        try:
            parsed[name.strip()] = float(rate) if rate else 1.0
        except ValueError:
            raise _fail(f"--faults takes name=rate, e.g. http_503=0.05; got {item!r}") from None
    if scale not in {"small", "medium", "large"}:
        raise _fail(f"--scale must be small, medium or large, got {scale!r}")
    if profile not in {"default", "strict"}:
        raise _fail(f"--profile must be default or strict, got {profile!r}")
    if not 0.0 <= late_event_share <= 1.0 or late_event_lag_seconds < 0:
        raise _fail(
            "--late-event-share must be between 0 and 1 and --late-event-lag-seconds 0 or more; "
            f"got {late_event_share} and {late_event_lag_seconds}"
        )
    settings = SandboxSettings(
        seed=seed,
        scale=scale,
        host=host,
        port=port,
        latency_ms=latency_ms,
        max_page_size=max_page_size,
        token_ttl=token_ttl,
        max_concurrency=max_concurrency,
        faults=parsed,
        late_event_share=late_event_share,
        late_event_lag_seconds=late_event_lag_seconds,
        profile=profile,
    )
    serve(settings, webhook_url=webhook_url, webhook_secret=webhook_secret)
