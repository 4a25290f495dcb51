"""Which streams a run can do without (assets/areas.py), what a refusal of one means
(assets/refusal.py), the lake's record of refusals, and the sandbox's refusal rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assets.areas import OPTIONAL_AREAS
from assets.catalogue import CATALOGUE, SPECS
from assets.endpoints import EndpointSpec
from assets.refusal import Refusal, read_refused, record_refused, refusal_of
from lake.store import Lake
from sandbox.areas import AreaRefusals
from service.errors import NotFound, PermissionDenied, ServiceUnavailable

DOC = Path(__file__).resolve().parents[2] / "docs" / "areas.md"
# what every mart is built on: refusing one of them must fail the run
CORE = {
    "reservations",
    "customer_merges",
    "distribution_channels",
    "locations",
    "accommodation_types",
    "units",
}


def test_the_core_streams_are_exactly_what_the_marts_cannot_do_without() -> None:
    assert {s.name for s in SPECS if s.optional_area is None} == CORE
    assert {s.optional_area for s in SPECS if s.optional_area} == set(OPTIONAL_AREAS)


def test_the_doc_names_every_stream_and_area() -> None:
    text = DOC.read_text()
    named = set(re.findall(r"`([a-z_]+)`", text))
    assert {s.name for s in SPECS} <= named
    for area in OPTIONAL_AREAS:
        assert f"| {area.name} |" in text, area.name


OWNERS = CATALOGUE.by_name["owners"]
RESERVATIONS = CATALOGUE.by_name["reservations"]


@pytest.mark.parametrize(
    ("spec", "error", "expected"),
    [
        (OWNERS, PermissionDenied("no", endpoint="/owners", status=403), "grant"),
        (OWNERS, NotFound("no", endpoint="/owners", status=404), "enable the owners module"),
        (
            OWNERS,
            ExceptionGroup("pages", [PermissionDenied("no", endpoint="/owners", status=403)]),
            "grant",
        ),
        (RESERVATIONS, PermissionDenied("no", endpoint="/reservations", status=403), None),
        (OWNERS, ServiceUnavailable("down", endpoint="/owners", status=503), None),
        (OWNERS, ValueError("a bug"), None),
    ],
    ids=["403", "404", "in-a-task-group", "core-stream", "outage", "other-error"],
)
def test_what_a_failure_means(
    spec: EndpointSpec, error: BaseException, expected: str | None
) -> None:
    refusal = refusal_of(spec, error)
    if expected is None:
        assert refusal is None
        return
    assert refusal is not None
    assert refusal.area == "owners" and refusal.tables == ("owners", "owner_contracts")
    assert expected in refusal.what_to_do
    assert "nothing removed" in refusal.line()


def _refusal(stream: str = "owners") -> Refusal:
    spec = CATALOGUE.by_name[stream]
    refusal = refusal_of(spec, PermissionDenied("no", endpoint=spec.source, status=403))
    assert refusal is not None
    return refusal


def test_the_lake_remembers_a_refusal_from_its_first_run_until_a_full_read(
    tmp_path: Path,
) -> None:
    lake = Lake(tmp_path / "lake")
    folder = tmp_path / "lake" / "_state" / "refused_areas"
    record_refused(lake, "20260101T000000Z-a", {"owners": _refusal()}, read=["units"])
    assert read_refused(lake)["owners"].since == "20260101T000000Z-a"
    # refused again: still since the first run, and the state is not rewritten
    record_refused(lake, "20260102T000000Z-b", {"owners": _refusal()}, read=[])
    assert read_refused(lake)["owners"].since == "20260101T000000Z-a"
    assert len(list(folder.glob("*.parquet"))) == 1
    # a run that is not refused but does not read it in full keeps it
    record_refused(lake, "20260103T000000Z-c", {"addons": _refusal("addons")}, read=["units"])
    assert set(read_refused(lake)) == {"owners", "addons"}
    # read in full: forgotten
    record_refused(lake, "20260104T000000Z-d", {}, read=["owners", "addons"])
    assert read_refused(lake) == {}


def test_the_sandbox_refuses_an_area_and_everything_below_it() -> None:
    areas = AreaRefusals({"owners": 403, "companies": 404})
    assert areas.decide("/owners", "client", "SBX") == (
        403,
        "FORBIDDEN",
        "the API user client has no permission for owners",
    )
    assert areas.decide("/companies/journalreports/7/entries", "client", "SBX") == (
        404,
        "NOT_FOUND",
        "companies is not enabled for concern SBX",
    )
    assert areas.decide("/reservations/details", "client", "SBX") is None
    assert areas.configure({}) == {} and areas.decide("/owners", "client", "SBX") is None


@pytest.mark.parametrize("bad", [{"owners": 500}, {"owners/x": 403}, {"": 403}])
def test_the_sandbox_takes_only_whole_areas_and_refusal_statuses(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        AreaRefusals(bad)
