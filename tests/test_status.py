"""`reservoir status` shows the webhook inbox (pending pushes were invisible) without creating
one where there is none, and counts the day's requests from the runs' records."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from dagster._core.storage.event_log import sql_event_log
from rich.console import Console

from pipelines.instance import prepare_instance
from pipelines.run_requests import REQUESTS_TAG
from pipelines.settings import Settings
from pipelines.status import print_status
from pipelines.webhook_inbox import INBOX_DIR_NAME, Notification, WebhookInbox


def _status(data_dir: Path) -> str:
    out = io.StringIO()
    print_status(Settings(data_dir=data_dir), Console(file=out, width=200))
    return out.getvalue()


def test_status_shows_pending_webhook_pushes(tmp_path: Path) -> None:
    assert "webhook inbox: none" in _status(tmp_path)
    assert not (tmp_path / INBOX_DIR_NAME).exists()  # looking did not create it

    inbox = WebhookInbox(tmp_path)
    for i in range(5):
        inbox.add(
            Notification(
                webhook_id=f"msg_{i}",
                received_at=datetime(2026, 11, 24, 9, i, tzinfo=UTC),
                event_occurred=None,
                type="reservation.status_change",
                reservation_id=100 + i,
            )
        )
    inbox.mark_processed(["msg_0"])
    text = _status(tmp_path)
    assert "webhook inbox: 4 pending, 1 processed" in text
    assert "oldest pending received 2026-11-24 09:01 UTC" in text


LAKE_TABLES = ("reservations", "reservation_lines")  # one stream's two tables


def _lake_asset(table: str) -> dg.AssetsDefinition:
    @dg.asset(key=["lake", table])
    def _table() -> dg.MaterializeResult:
        # as `pipelines.lake_metadata`: the stream's requests on each table, the rest once
        first = table == LAKE_TABLES[0]
        return dg.MaterializeResult(
            metadata={"stream": "reservations", "requests_used": 5, "run_requests": 2 * first}
        )

    return _table


@dg.asset(key=["core", "model"])
def _model() -> None:
    return None


def _loaded_materializations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The run ids of the materialization events the event log deserialises from now on."""
    loaded: list[str] = []

    def counted(entry: Any) -> Any:
        for one in entry if isinstance(entry, list) else [entry]:
            if (
                getattr(one, "dagster_event_type", None)
                == dg.DagsterEventType.ASSET_MATERIALIZATION
            ):
                loaded.append(one.run_id)
        return entry

    for name in ("deserialize_value", "deserialize_values"):
        real = getattr(sql_event_log, name)
        monkeypatch.setattr(
            sql_event_log,
            name,
            lambda *a, _real=real, **kw: counted(
                list(r) if isinstance(r := _real(*a, **kw), Iterator) else r
            ),
        )
    return loaded


def test_status_counts_requests_from_the_runs_tags_without_loading_their_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The day's requests come from each run's tag (written by its lake step): a run's
    materializations are read only for a run recorded before the tag, and the command opens the
    Dagster instance once."""
    settings = Settings(data_dir=tmp_path)
    lake = [_lake_asset(t) for t in LAKE_TABLES]
    with prepare_instance(settings) as instance:
        tagged = [dg.materialize([*lake, _model], instance=instance, tags={REQUESTS_TAG: "7"})]
        tagged.append(dg.materialize([*lake], instance=instance, tags={REQUESTS_TAG: "7"}))
        legacy = dg.materialize([*lake, _model], instance=instance)  # before the tag: 7
        # no lake step (a selection without it, as the UI launches one), no tag: 0
        job = dg.define_asset_job("all").resolve(
            asset_graph=dg.Definitions(assets=[*lake, _model]).resolve_asset_graph()
        )
        job.execute_in_process(instance=instance, asset_selection=[_model.key])
    assert all(r.success for r in [*tagged, legacy])

    loaded = _loaded_materializations(monkeypatch)
    opened: list[str] = []
    real_get = dg.DagsterInstance.get
    monkeypatch.setattr(dg.DagsterInstance, "get", lambda: opened.append("get") or real_get())
    text = _status(tmp_path)
    assert "requests today: 21 of 25,000 free" in text
    assert set(loaded) == {legacy.run_id}, "materializations of tagged runs were loaded"
    assert opened == ["get"]
    assert text.count("SUCCESS") == 4  # the last runs are listed
