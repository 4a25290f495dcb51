"""A model whose every affected key's rows change in a refresh (`-- incremental changes every
affected key`, `warehouse.headers`): its readers are handed the affected keys, and none of its
old rows is copied out to find those that differ (`warehouse.delta.replace_keys`;
docs/benchmarks.md, session 20). Each refresh here also equals a whole rebuild."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

import warehouse.inplace
from tests.warehouse.lakefixture import Lake
from tests.warehouse.scenarios import Batch
from tests.warehouse.test_incremental_header import _model
from tests.warehouse.test_inplace import (
    AS_OF,
    _differences_from_a_whole_rebuild,
    _first_state_copy,
)
from tests.warehouse.test_inplace_cost import _record
from warehouse.changes import handed_keys, model_version
from warehouse.inplace import update_warehouse
from warehouse.models import Model, discover_models, parse_model

LINE = "-- incremental changes every affected key"
# the models a reservation's change reaches that hand their readers the affected keys
HANDED = (
    "core_fct_bill_lines",
    "core_fct_bill_line_nights",
    "core_fct_reservation_versions",
    "staging_stg_reservations",
    "staging_stg_reserved_resources",
)


def test_the_line_is_read_and_left_out_of_the_description_and_the_version(
    tmp_path: Path,
) -> None:
    plain = parse_model(_model(tmp_path, "-- incremental by a\n-- The description."))
    handed = parse_model(_model(tmp_path, f"-- incremental by a\n{LINE}\n-- The description."))
    assert handed.incremental is not None and handed.incremental.every_key_changes
    assert plain.incremental is not None and not plain.incremental.every_key_changes
    assert handed.description == plain.description == "The description."
    # it says how readers learn of a change, not what the rows are: declaring it rebuilds nothing
    assert model_version(handed) == model_version(plain)


@pytest.mark.parametrize(
    "header",
    [
        LINE,  # rebuilt whole: it has no affected keys
        f"-- incremental sums over core.x by a\n{LINE}",
        f"-- incremental by a\n{LINE}\n{LINE}",
    ],
)
def test_the_line_needs_a_key_and_comes_once(tmp_path: Path, header: str) -> None:
    with pytest.raises(ValueError, match="changes every affected key"):
        parse_model(_model(tmp_path, header))


def _models(tmp_path: Path, **headers: str) -> dict[str, Model]:
    """Models `core.<name>` with the given headers (`core.src` the model the others read)."""
    out = {}
    for name, header in headers.items():
        path = tmp_path / "core" / f"{name}.sql"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "select 1 as a, 2 as b" if name == "src" else "select * from core.src"
        path.write_text(f"{header}\n{body}\n")
        model = parse_model(path)
        out[model.qualified] = model
    return out


def test_the_models_that_hand_their_keys() -> None:
    """Each carries the lake batch its rows were read in, and a key is affected when its rows
    are read again (the hour's 510 reservations, 1,409 type x arrival dates and 7 customers at
    large all differed, session 20; the versions of 503 of the 510, session 22); every reader
    of theirs takes them by their key. The bill line nights changed for 197 of the 510, but each
    of their readers reads by the same key a model changed for every reservation read again
    (the bill lines, which hand their keys; the reservations, which carry the batch read in), so
    is handed all 510 anyway (session 22): their diff narrowed nothing and cost a copy of the
    old rows."""
    models = discover_models()
    for reader in models.values():
        if "core.fct_bill_line_nights" in reader.deps:
            assert reader.deps & {"core.fct_bill_lines", "core.fct_reservations"}, reader.qualified
    assert handed_keys(models) == {
        "core.fct_bill_lines",
        "core.fct_bill_line_nights",
        "core.fct_reservation_versions",
        "staging.stg_reservations",
        "staging.stg_availability",
        "staging.stg_availability_prices",
        "staging.stg_reserved_resources",
        "staging.stg_customers",
    }


def test_a_reader_by_other_than_the_key_is_refused(tmp_path: Path) -> None:
    src = f"-- incremental by a\n{LINE}"
    fine = _models(
        tmp_path / "1",
        src=src,
        r1="-- incremental by a",
        r2="-- incremental by x from core.src: a",
        r3="-- A whole rebuild.",
    )
    assert handed_keys(fine) == {"core.src"}
    for name, reader in (
        ("plain", "-- incremental by b"),  # its key b is not src's key
        ("expr", "-- incremental by x from core.src: a + 1"),
        ("query", "-- incremental by x from core.src: select a from changed_rows"),
        ("sums", "-- incremental sums over core.src by a"),  # needs the rows removed and added
    ):
        models = _models(tmp_path / name, src=src, r=reader)
        with pytest.raises(ValueError, match="by other than its key"):
            handed_keys(models)


def test_a_refresh_hands_the_affected_keys_and_copies_no_old_rows(
    first_state: tuple[Path, int], lake: Lake, tmp_path: Path, monkeypatch: Any
) -> None:
    """Reservation 2 re-read with a line changed, reservation 3 re-read without its lines:
    the bill lines, the reservations and their reserved resources delete and insert the keys'
    rows with no copy of the old ones, and hand their readers both reservations (3 lost every line, so its rows are
    nowhere among the new ones); the readers follow by key. Equal to a whole rebuild."""
    _first_state_copy(first_state, lake, tmp_path)
    batch = Batch().reservation(2, "2025-01-02", "2025-01-05", unit_id=2, nightly="90.00")
    batch.reservation(3, "2025-01-06", "2025-01-08", unit_id=3)
    batch.tables["bill_lines"] = [
        line for line in batch.tables["bill_lines"] if line["reservation_id"] != 3
    ]
    batch.flush(lake)
    _, temps = _record(monkeypatch)
    handed: dict[str, list[tuple[object, ...]]] = {}
    listed = warehouse.inplace.describe_models  # `_record`'s: lists the temps

    def seen(con: duckdb.DuckDBPyConnection, *args: Any) -> Any:
        for base in HANDED:
            rows = con.execute(f'select * from "_changed_{base}" order by all')
            handed[base] = rows.fetchall()
        return listed(con, *args)

    monkeypatch.setattr(warehouse.inplace, "describe_models", seen)
    result = update_warehouse(tmp_path, as_of=AS_OF)
    for q in ("core.fct_bill_lines", "staging.stg_reservations", "core.fct_reservations"):
        assert result.refreshed[q] == "keys", result.refreshed
    assert handed == {base: [(2,), (3,)] for base in HANDED}
    for base in HANDED:
        assert f"_old_{base}" not in temps and f"_diff_{base}" not in temps, sorted(temps)
        assert temps.get(f"_changed_{base}") == "view", temps
    # a reader whose changed rows are read keeps its diff
    assert temps.get("_old_core_fct_reservations") == "table", sorted(temps)
    assert _differences_from_a_whole_rebuild(tmp_path, "reference") == {}
