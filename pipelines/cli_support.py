"""What every command of the CLI shares: the one-line error, the settings read when a command
runs and the warehouse a command reads (`pipelines.cli` and the commands defined beside their
feature use them)."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import NoReturn

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


def exit_now(code: int | str | None) -> NoReturn:
    """End the command's process as the interpreter's own exit would, without its teardown.

    Once a command is done, Python's finalisation frees every module and object one by one
    (Dagster, pyarrow, DuckDB, a run's leftovers): ~0.8 s after the imports alone and ~4.6 s at
    the end of a large run on a shared host (docs/benchmarks.md, session 12), all of it waited
    for at the prompt. The steps of an exit that matter are kept, in the interpreter's order:
    threads that are not daemons are joined, atexit handlers run (the normaliser pool's
    shutdown, multiprocessing's, logging's), stdout and stderr are flushed. A `str` code is
    printed on stderr and exits 1, as `sys.exit` does.
    """
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter calls first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code or 0)
