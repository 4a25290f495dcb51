"""What every command of the CLI shares: the one-line error and the settings read when a
command runs (`pipelines.cli` and the commands defined beside their feature use them)."""

from __future__ import annotations

import typer

from pipelines.settings import Settings, SettingsError


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: message` in red on stderr; raise the returned Exit."""
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def load_settings() -> Settings:
    try:
        return Settings.from_env()
    except SettingsError as exc:
        raise fail(str(exc)) from None
