"""docs/interface-coverage.md is the generator's output (`python -m pipelines.coverage_doc`), and
it names every route the sandbox serves and every path the endpoint catalogue reads."""

from __future__ import annotations

import re
from pathlib import Path

from assets.catalogue import CATALOGUE
from pipelines.coverage_doc import WHY_NOT, _norm, render, rows, sandbox_routes
from service.interface import INTERFACE_PATHS

DOC = Path(__file__).resolve().parents[1] / "docs" / "interface-coverage.md"


def _documented(text: str) -> set[tuple[str, str]]:
    found = re.findall(r"^\| (GET|POST|PUT|DELETE) \| `([^`]+)` \|", text, re.MULTILINE)
    return {(m, _norm(p)) for m, p in found}


def test_the_committed_page_is_the_generated_one() -> None:
    assert DOC.read_text() == render(sandbox_routes()), (
        "docs/interface-coverage.md is stale: python -m pipelines.coverage_doc > "
        "docs/interface-coverage.md"
    )


def test_every_sandbox_route_and_catalogue_path_is_on_the_page() -> None:
    documented = _documented(DOC.read_text())
    routes = sandbox_routes()
    assert len(routes) > 50
    assert {(m, _norm(p)) for m, p in routes} <= documented
    for spec in CATALOGUE.specs:
        assert ("GET", _norm(spec.source)) in documented, spec.name
    # every interface path once, in the interface's order
    assert len({(p.method, _norm(p.path)) for p in INTERFACE_PATHS}) == len(INTERFACE_PATHS)


def test_every_gap_has_a_reason_and_the_offers_are_covered() -> None:
    table = {
        (ip.method, ip.path): (served, ext, marts, why)
        for ip, served, ext, marts, why in rows(sandbox_routes())
    }
    for (method, path), (served, ext, _marts, why) in table.items():
        if not served or ext == "no":
            assert why, (method, path)
    assert table[("GET", "/offers")][1:3] == ("offers", "offer_discount_monthly")
    assert table[("GET", "/offers/additions")][1] == "offer_additions"
    assert table[("GET", "/accommodationtypes/additions")][1] == "accommodation_type_additions"
    assert all(
        table[("GET", p)][0] for p in ("/offers/{resourceId}/implies", "/units/{unitId}/implies")
    )
    # no reason is kept for a path the interface does not have
    named = {(p.method, _norm(p.path)) for p in INTERFACE_PATHS}
    assert set(WHY_NOT) <= named, set(WHY_NOT) - named
