"""What every command of the CLI shares: the one-line error, the settings read when a command
runs and the warehouse a command reads (`pipelines.cli` and the commands defined beside their
feature use them)."""

from __future__ import annotations

from pathlib import Path

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


def built_warehouse(settings: Settings) -> Path:
    """The warehouse file a command reads; a one-line error when no run has built it yet."""
    if not settings.warehouse_path.exists():
        raise fail(f"no warehouse at {settings.warehouse_path}; run `reservoir run` first.")
    return settings.warehouse_path
