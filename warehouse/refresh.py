"""Refresh the warehouse after lake changes: in place, by key where models allow it
(`warehouse.inplace`), or a new build when there is none yet or every table changed."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any

from lake.locks import DEFAULT_LOCK_TIMEOUT, writer_lock
from lake.state import PENDING_STATE, next_batch_id, pending_tables
from lake.store import Lake
from lake.tables import TABLES
from warehouse import asof
from warehouse.build import build_warehouse, warehouse_path
from warehouse.inplace import update_warehouse


def refresh_warehouse(
    data_dir: Path | str,
    *,
    as_of: date | None = None,
    tables: Iterable[str] = (),
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    defer_merges: bool = False,
) -> Any:
    """Refresh the models whose inputs changed (pending tables tell whether any did); None if
    nothing changed and the as-of date did not move.

    With no warehouse file yet, or when every lake table changed (a full extraction), everything
    is built into a new file. Otherwise the published file is refreshed in place: the lake files
    it has not read yet give the changed rows, and each model is maintained by key, rebuilt, or
    left as it is (`warehouse.maintain`). When the as-of date moved (`as_of`, else the service's
    date the lake's newest run recorded) the models that read it are rebuilt too.
    `defer_merges`: the in-place refresh leaves DuckDB's row-group merges to a tidy run after it
    (`warehouse.tidy`), which the caller runs.
    """
    data_dir = Path(data_dir)
    lake = Lake(data_dir / "lake")
    # Under the writer lock: a run landing while we build would otherwise have its pending
    # tables cleared by us without its rows being in the build.
    with writer_lock(lake, lock_timeout):
        changed = pending_tables(lake) | set(tables)
        target = warehouse_path(data_dir)
        missing = not target.exists()
        if not changed and not missing:  # then only a moved as-of date refreshes it
            # (asked of the file only here: opening it costs ~0.04 CPU s at large scale)
            wanted = as_of or getattr(asof.from_lake(lake.root), "as_of", None)
            published = asof.published(target)
            if wanted is None or (published is not None and published.as_of == wanted):
                return None
        if missing or changed >= set(TABLES):
            result = build_warehouse(data_dir, as_of=as_of)
        else:
            result = update_warehouse(data_dir, as_of=as_of, defer_merges=defer_merges)
        lake.write_state(PENDING_STATE, next_batch_id(lake), {"tables": "", "batch_id": ""})
    return result
