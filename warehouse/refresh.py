"""Rebuild only the warehouse models that read lake tables changed since the last build."""

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
from warehouse.models import discover_models, models_depending_on

PARTIAL_BUILD_SHARE = 0.5


def refresh_warehouse(
    data_dir: Path | str,
    *,
    as_of: date | None = None,
    tables: Iterable[str] = (),
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
) -> Any:
    """Rebuild only the models that read changed tables (pending ones included); None if none.

    With no warehouse file yet, everything is built. When the as-of date moved (`as_of`, else
    the service's date the lake's newest run recorded) the models that read it are rebuilt too,
    even if no table changed.
    """
    data_dir = Path(data_dir)
    lake = Lake(data_dir / "lake")
    # Under the writer lock: a run landing while we build would otherwise have its pending
    # tables cleared by us without its rows being in the build.
    with writer_lock(lake, lock_timeout):
        changed = pending_tables(lake) | set(tables)
        target = warehouse_path(data_dir)
        missing = not target.exists()
        wanted = as_of or getattr(asof.from_lake(lake.root), "as_of", None)
        published = asof.published(target)
        moved = wanted is not None and (published is None or published.as_of != wanted)
        if not changed and not missing and not moved:
            return None
        full = missing or changed >= set(TABLES)
        only = None if full else models_depending_on(changed)
        if only is not None and len(only) > PARTIAL_BUILD_SHARE * len(discover_models()):
            # A partial build copies the published file first; past about half of the models
            # that copy costs more than building everything fresh (bench/incremental.py).
            only = None
        build = only is None or only or moved  # an empty `only`: the as-of readers alone
        result = build_warehouse(data_dir, only=only, as_of=as_of) if build else None
        lake.write_state(PENDING_STATE, next_batch_id(lake), {"tables": "", "batch_id": ""})
    return result
