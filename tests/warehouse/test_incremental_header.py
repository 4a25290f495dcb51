"""The `-- incremental by` header of a model (`warehouse.models`): a key of one column or of
several, each input's expression, how it is stored, and the mistakes it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from warehouse.changes import model_version
from warehouse.models import discover_models, parse_model


def _model(tmp_path: Path, header: str) -> Path:
    path = tmp_path / "marts" / "m.sql"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"{header}\nselect 1 as a, 2 as b\n")
    return path


def test_a_key_of_several_columns_names_one_expression_per_column() -> None:
    models = discover_models()
    revenue = models["marts.revenue_daily"].incremental
    assert revenue is not None
    assert revenue.keys == ("date_day", "accommodation_type_id")
    assert revenue.expression("core.fct_stay_nights") == "night_date, accommodation_type_id"
    assert revenue.expression("core.dim_reporting_currencies") is None  # rebuilt whole
    unit_nights = models["core.fct_unit_nights"].incremental
    assert unit_nights is not None and unit_nights.keys == ("night_date", "unit_id")
    stays = models["core.fct_stay_nights"].incremental
    assert stays is not None and stays.keys == ("reservation_id",)
    assert stays.expression("staging.stg_reservations") == "reservation_id"


def test_the_plain_form_of_several_columns_maps_each_input_by_them(tmp_path: Path) -> None:
    inc = parse_model(_model(tmp_path, "-- incremental by a, b")).incremental
    assert inc is not None and inc.keys == ("a", "b")
    assert inc.expression("core.anything") == "a, b"


@pytest.mark.parametrize(
    "header",
    [
        "-- incremental by a, a",
        "-- incremental by a\n-- incremental by a, b from core.x: a, b",
    ],
)
def test_a_key_named_twice_or_two_keys_are_refused(tmp_path: Path, header: str) -> None:
    with pytest.raises(ValueError, match="key"):
        parse_model(_model(tmp_path, header))


def test_a_query_for_an_input_changed_whole_is_kept_apart_from_the_description(
    tmp_path: Path,
) -> None:
    header = (
        "-- incremental by a from core.x: a\n"
        "-- incremental when meta.build_settings changed whole: select a from marts.m\n"
        "-- The description."
    )
    model = parse_model(_model(tmp_path, header))
    assert model.incremental is not None
    assert model.incremental.when_whole("meta.build_settings") == "select a from marts.m"
    assert model.incremental.when_whole("core.x") is None
    assert model.incremental.expression("meta.build_settings") is None
    assert model.description == "The description."
    pickup = discover_models()["core.fct_allotment_pickup_weeks"].incremental
    assert pickup is not None
    assert pickup.when_whole("meta.build_settings") is not None
    with pytest.raises(ValueError, match="from"):
        parse_model(_model(tmp_path, "-- incremental by a\n" + header.splitlines()[1]))


def test_a_model_by_key_that_shifts_with_the_as_of_date_is_refused(tmp_path: Path) -> None:
    """`incremental shifts` is a model of sums' form only: a model by key stores its snapshots by
    their distance from the as-of date (allotment pickup's weeks back) and needs no shift."""
    header = (
        "-- incremental by a from core.x: a\n"
        "-- incremental shifts as_of_date with the as-of date\n"
        "-- incremental when meta.build_settings changed whole: with d as (select 1 as a) "
        "select a from d\n"
        "-- The description."
    )
    with pytest.raises(ValueError, match="shifts` is for a model of sums"):
        parse_model(_model(tmp_path, header))
    without = "\n".join(line for line in header.splitlines() if "shifts" not in line)
    model = parse_model(_model(tmp_path, without))
    assert model.incremental is not None
    assert model.incremental.when_whole("meta.build_settings") == (
        "with d as (select 1 as a) select a from d"
    )
    assert model.description == "The description."


def test_a_model_of_sums_that_shifts_takes_a_query_continued_over_several_lines(
    tmp_path: Path,
) -> None:
    """A model of sums whose snapshots move with the as-of date: its query of what a move
    changes may continue on lines with the same prefix (joined with a space, out of the
    description); a shift without the query, or the query without a shift, is refused."""
    header = (
        "-- incremental sums over core.x by a\n"
        "-- incremental shifts a with the as-of date\n"
        "-- incremental when meta.build_settings changed whole: select a,\n"
        "-- incremental when meta.build_settings changed whole: b from core.x\n"
        "-- The description."
    )
    model = parse_model(_model(tmp_path, header))
    assert model.sums is not None and model.incremental is None
    assert (model.sums.shifts, model.sums.moved) == ("a", "select a, b from core.x")
    assert model.description == "The description."
    for dropped in ("shifts", "changed whole"):
        partial = "\n".join(line for line in header.splitlines() if dropped not in line)
        with pytest.raises(ValueError, match="shifts"):
            parse_model(_model(tmp_path, partial))


def test_a_view_reads_models_only_and_is_not_maintained_by_key(tmp_path: Path) -> None:
    """`-- materialized as a view`: kept out of the description; refused over the lake (its
    catalogs are detached before publishing) or with an incremental form (nothing stored)."""
    model = parse_model(_model(tmp_path, "-- materialized as a view\n-- The description."))
    assert model.view and model.description == "The description."
    stg = discover_models()["staging.stg_bill_lines"]
    assert stg.view and stg.deps == {"core.fct_bill_lines"} and stg.incremental is None
    assert not discover_models()["core.fct_bill_lines"].view
    path = tmp_path / "staging" / "v.sql"
    path.parent.mkdir()
    path.write_text("-- materialized as a view\nselect * from lake_current.bill_lines\n")
    with pytest.raises(ValueError, match="view"):
        parse_model(path)
    with pytest.raises(ValueError, match="view"):
        parse_model(_model(tmp_path, "-- materialized as a view\n-- incremental by a"))


def test_a_model_by_key_stored_as_built_is_not_sorted_and_keeps_its_version(
    tmp_path: Path,
) -> None:
    """`-- incremental stored as built`: kept out of the description; a whole build stores the
    query's rows as they come, not ordered by the key; the model's version is its SQL's without
    the line, so declaring it (or dropping it) rebuilds nothing."""
    by_key = parse_model(_model(tmp_path, "-- incremental by a\n-- The description."))
    header = "-- incremental by a\n-- incremental stored as built\n-- The description."
    as_built = parse_model(_model(tmp_path, header))
    assert as_built.incremental is not None and as_built.incremental.stored_as_built
    assert by_key.incremental is not None and not by_key.incremental.stored_as_built
    assert as_built.description == by_key.description == "The description."
    assert as_built.table_sql == as_built.sql
    assert by_key.table_sql.endswith('order by "a"')
    assert model_version(as_built) == model_version(by_key)
    other = parse_model(_model(tmp_path, "-- incremental by b\n-- The description."))
    assert model_version(other) != model_version(by_key)  # any other header line counts
    stored = [
        q for q, m in discover_models().items() if m.incremental and m.incremental.stored_as_built
    ]
    # the bill lines (their sort spilled); the journal entries, rate availability and the
    # reservations, whose rows come out of a build clustered by their key anyway
    # (docs/benchmarks.md, sessions 22 and 23); booking pace, one row group at large, rebuilt
    # whole when the as-of date moves (session 25)
    assert stored == [
        "core.fct_bill_lines",
        "core.fct_journal_entries",
        "core.fct_reservations",
        "marts.booking_pace",
        "marts.rate_availability_daily",
    ]


def test_a_model_by_key_stored_by_other_columns_orders_by_them_and_keeps_its_version(
    tmp_path: Path,
) -> None:
    """`-- incremental stored by <columns>`: kept out of the description; a whole build orders
    the rows by those columns, not the key; the version leaves the line out."""
    by_key = parse_model(_model(tmp_path, "-- incremental by a\n-- The description."))
    header = "-- incremental by a\n-- incremental stored by b, a\n-- The description."
    by_other = parse_model(_model(tmp_path, header))
    assert by_other.incremental is not None and by_other.incremental.stored_by == ("b", "a")
    assert not by_other.incremental.stored_as_built
    assert by_other.incremental.storage_order == ("b", "a")
    assert by_other.description == by_key.description == "The description."
    assert by_other.table_sql.endswith('order by "b", "a"')
    assert model_version(by_other) == model_version(by_key)


def test_a_model_stored_by_columns_in_a_cte_orders_that_cte_and_keeps_its_version(
    tmp_path: Path,
) -> None:
    """`-- incremental stored by <columns> in <cte>`: a whole build orders the rows of that
    common table expression (the query keeps their order), not the query's result; the version
    leaves the line out; a name that is no CTE of the model is refused."""
    body = "with lines as (\n    select 1 as a, 2 as b\n)\nselect * from lines"
    (tmp_path / "marts").mkdir()
    plain = tmp_path / "marts" / "plain.sql"
    plain.write_text(f"-- incremental by a\n-- The description.\n{body}\n")
    inside = tmp_path / "marts" / "m.sql"
    inside.write_text(
        f"-- incremental by a\n-- incremental stored by b, a in lines\n-- The description.\n{body}\n"
    )
    by_key, in_cte = parse_model(plain), parse_model(inside)
    assert in_cte.incremental is not None and in_cte.incremental.stored_in == "lines"
    assert in_cte.incremental.storage_order == ("b", "a")
    assert by_key.incremental is not None and by_key.incremental.stored_in is None
    assert in_cte.table_sql.endswith("select * from lines")
    assert 'select 1 as a, 2 as b\n\n) order by "b", "a")\nselect * from lines' in in_cte.table_sql
    assert in_cte.description == by_key.description == "The description."
    assert model_version(in_cte) == model_version(by_key)
    inside.write_text(f"-- incremental by a\n-- incremental stored by a in nowhere\n{body}\n")
    with pytest.raises(ValueError, match="no such CTE"):
        parse_model(inside)


@pytest.mark.parametrize(
    "header",
    [
        "-- incremental by a\n-- incremental stored by",
        "-- incremental by a\n-- incremental stored by a,",
        "-- incremental by a\n-- incremental stored by b\n-- incremental stored as built",
        "-- incremental stored by a",
    ],
)
def test_stored_by_needs_columns_a_key_and_its_one_line(tmp_path: Path, header: str) -> None:
    with pytest.raises(ValueError, match="stored by"):
        parse_model(_model(tmp_path, header))


@pytest.mark.parametrize(
    "header",
    [
        "-- incremental stored as built",  # rebuilt whole: stored as built anyway
        "-- incremental sums over core.x by a\n-- incremental stored as built",
        "-- materialized as a view\n-- incremental stored as built",
        "-- incremental by a\n-- incremental stored as built\n-- incremental stored as built",
        "-- incremental by a\n-- incremental stored as built, not by key",
        "-- incremental by a\n-- incremental stored in build order",
    ],
)
def test_stored_as_built_needs_a_key_and_its_one_line(tmp_path: Path, header: str) -> None:
    with pytest.raises(ValueError, match="stored as built"):
        parse_model(_model(tmp_path, header))
