"""Reservation-details sections the service refuses: negotiated once, read per reservation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.api import RESERVATION_SECTIONS, ReservationService
from service.client import ServiceClient
from service.errors import BadRequest, NotFound
from service.sections import DetailSections
from service.sync import run
from service.throttle import ConcurrencyLimiter
from tests.service.helpers import drain
from tests.service.test_sandbox import config_for

runner = pytest.importorskip("sandbox.runner")


@pytest.fixture(scope="module")
def strict() -> Iterator[Any]:
    settings = runner.SandboxSettings(scale="small", seed=11, profile="strict")
    with runner.run_sandbox(settings) as handle:
        yield handle


def _service(handle: Any) -> ReservationService:
    client = ServiceClient(config_for(handle, page_size=100), limiter=ConcurrencyLimiter(15))
    return ReservationService(client, owns_client=True)


def _details_requests(service: ReservationService) -> int:
    return int(service.stats["by_endpoint"].get("/reservations/details", 0))


@pytest.mark.sandbox
@pytest.mark.xdist_group("service-strict")
def test_refused_sections_are_dropped_once_and_read_per_reservation(strict: Any) -> None:
    world = strict.world
    ids = list(world.keys("reservations"))[:150]

    async def read() -> tuple[list[dict], list[dict], list[str], int, int]:
        async with _service(strict) as service:
            first = await drain(service.reservation_details(ids=ids))
            before = _details_requests(service)
            again = await drain(service.reservation_details(ids=ids[:20]))
            return first, again, service.notes, before, _details_requests(service) - before

    first, again, notes, used, second = run(read())
    assert sorted(r["reservationId"] for r in first) == ids
    for record in first:
        rid = record["reservationId"]
        lines = world.children("billlines", rid)
        assert record["payingCustomerBill"] == [
            x for x in lines if x["payerType"] == "PAYING_CUSTOMER"
        ]
        assert record["customerBill"] == [x for x in lines if x["payerType"] == "CUSTOMER"]
        assert record["subjects"] == world.children("subjects", rid)
    assert any(r["payingCustomerBill"] for r in first) and all(r["subjects"] for r in first)
    # the refused request and one probe per section, then the pages (150 ids at 100 a page)
    assert used == 1 + len(RESERVATION_SECTIONS) + 2
    assert second == 1 and {r["reservationId"] for r in again} == set(ids[:20])
    (note,) = notes
    assert "PAYINGCUSTOMERBILL, SUBJECTS" in note and "/reservations/bills" in note


class _Client:
    """A stand-in client: `get_page` refuses the sections in `refused` (or everything)."""

    def __init__(self, refused: set[str] | None, *, missing_subjects: bool = False) -> None:
        self.refused = refused
        self.missing_subjects = missing_subjects
        self.pages: list[dict[str, Any]] = []

    async def get_page(self, path: str, *, params: dict[str, Any], template: str) -> None:
        self.pages.append(params)
        section = params.get("returnSections")
        if self.refused is None or section in self.refused:
            raise BadRequest("400", server_message="no")

    async def get_json(self, path: str, *, template: str) -> list[dict[str, Any]]:
        rid = int(path.split("/")[2])
        if self.missing_subjects and rid % 2:
            raise NotFound("404")
        return [{"reservationSubjectId": rid, "reservationId": rid}]


def test_a_400_about_something_else_is_raised() -> None:
    error = BadRequest("400: bad filter", server_message="unknown field")
    sections = DetailSections(_Client(refused=set()))
    with pytest.raises(BadRequest, match="bad filter"):
        run(sections.negotiate(RESERVATION_SECTIONS, error))
    assert sections.refused == frozenset() and sections.notes == []
    nothing = DetailSections(_Client(refused=None))  # refuses any request at all
    with pytest.raises(BadRequest, match="bad filter"):
        run(nothing.negotiate(RESERVATION_SECTIONS, error))


def test_a_section_whose_endpoint_fails_is_left_empty_with_a_note() -> None:
    client = _Client(refused={"SUBJECTS"}, missing_subjects=True)
    sections = DetailSections(client)
    refused = run(sections.negotiate(RESERVATION_SECTIONS, BadRequest("400", server_message="x")))
    assert refused == {"SUBJECTS"}
    page = [{"reservationId": rid} for rid in (1, 2, 3, 4)]
    done = run(sections.complete(page, ["SUBJECTS"]))
    assert [len(r["subjects"]) for r in done] == [0, 1, 0, 1]
    first, second = sections.notes
    assert "refused returnSections SUBJECTS" in first
    assert "2 reservation(s) left without subjects" in second


def test_nothing_is_asked_while_every_section_is_accepted() -> None:
    client = _Client(refused=set())
    sections = DetailSections(client)
    page = [{"reservationId": 1}]
    assert run(sections.complete(page, [])) == page
    assert client.pages == [] and sections.notes == []
