"""Each opt-in fault, seen from a real HTTP client."""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import orjson
import pytest

from sandbox.faults import BAD_DATE, BAD_NUMBER, BAD_STATUS, Faults, malform, validate_rates
from sandbox.runner import SandboxHandle, SandboxSettings, run_sandbox
from tests.sandbox.conftest import TinyWorld, authenticate

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def faulty() -> Iterator[SandboxHandle]:
    with run_sandbox(SandboxSettings(slow_seconds=1.0), world=TinyWorld()) as handle:
        yield handle


@pytest.fixture
def client(faulty: SandboxHandle) -> Iterator[httpx.Client]:
    faulty.faults.configure({})
    with httpx.Client(base_url=faulty.base_url, timeout=10) as http:
        http.headers["Authorization"] = authenticate(faulty, http)
        yield http
    faulty.faults.configure({})


@pytest.mark.parametrize(
    ("fault", "status"),
    [("http_500", 500), ("http_502", 502), ("http_503", 503), ("storm_429", 429)],
    ids=["500", "502", "503", "storm-429"],
)
def test_status_faults(
    faulty: SandboxHandle, client: httpx.Client, fault: str, status: int
) -> None:
    faulty.faults.configure({fault: 1.0})
    response = client.get("/customers")
    assert response.status_code == status
    assert response.json()["status"] == status
    if status in (429, 503):
        assert response.headers["Retry-After"] == "1"
    assert faulty.stats()["faults"]["injected"][fault] >= 1


def test_faults_spare_authenticate_and_admin(faulty: SandboxHandle, client: httpx.Client) -> None:
    faulty.faults.configure({"http_500": 1.0, "drop": 1.0})
    assert authenticate(faulty).startswith("Bearer ")
    assert httpx.get(faulty.admin_url + "/health").status_code == 200
    assert client.put("/reservations/1000", json={"action": "CONFIRM"}).status_code == 200


def test_slow_passes_a_client_timeout(faulty: SandboxHandle, client: httpx.Client) -> None:
    faulty.faults.configure({"slow": 1.0})
    with pytest.raises(httpx.ReadTimeout):
        client.get("/customers", timeout=0.3)


def test_drop_closes_the_connection_mid_response(
    faulty: SandboxHandle, client: httpx.Client
) -> None:
    faulty.faults.configure({"drop": 1.0})
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        client.get("/customers")
    faulty.faults.configure({})
    assert client.get("/customers").status_code == 200


def test_truncate_sends_half_a_json_body(faulty: SandboxHandle, client: httpx.Client) -> None:
    full = client.get("/customers").content
    faulty.faults.configure({"truncate": 1.0})
    response = client.get("/customers")
    assert response.status_code == 200
    assert response.content == full[: len(full) // 2]
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(response.content)


def test_token_expire_applies_to_writes_too(faulty: SandboxHandle, client: httpx.Client) -> None:
    faulty.faults.configure({"token_expire": 1.0})
    for response in (client.get("/customers"), client.post("/reservations", json={})):
        assert response.status_code == 401
        assert response.json()["code"] == "TOKEN_EXPIRED"
    faulty.faults.configure({})
    assert client.get("/customers").status_code == 200


def test_churn_asks_the_world_to_change(faulty: SandboxHandle, client: httpx.Client) -> None:
    world = faulty.world
    assert isinstance(world, TinyWorld)
    first = client.get("/companies").json()["content"][0]["companyId"]
    faulty.faults.configure({"churn": 1.0})
    after = client.get("/companies").json()["content"]
    assert world.churned == ["companies"]
    assert after[0]["companyId"] == first + 1


def test_malformed_damages_copies_only(faulty: SandboxHandle, client: httpx.Client) -> None:
    faulty.faults.configure({"malformed": 1.0}, malformed_fraction=1.0)
    content = client.get("/reservations", params={"size": 30}).json()["content"]
    clean = faulty.world.records("reservations")
    assert len(content) == 30
    for served, stored in zip(content, clean, strict=True):
        changed = {k for k in stored if served[k] != stored[k]}
        assert len(changed) == 1, (served, stored)
        value = served[changed.pop()]
        assert value in (None, BAD_DATE, BAD_STATUS, BAD_NUMBER)
    assert all(r["reservationId"] is not None for r in clean)
    assert all(r["status"] != BAD_STATUS for r in clean)


def test_same_seed_same_faults(faulty: SandboxHandle, client: httpx.Client) -> None:
    runs = []
    for _ in range(2):
        faulty.faults.configure({"http_503": 0.5}, seed=42)
        runs.append([client.get("/units").status_code for _ in range(12)])
    assert runs[0] == runs[1]
    assert set(runs[0]) == {200, 503}


def test_faults_configured_over_admin_api(faulty: SandboxHandle, client: httpx.Client) -> None:
    response = httpx.post(
        faulty.admin_url + "/faults", json={"faults": {"http_502": 1.0}, "seed": 3}
    )
    assert response.json()["faults"] == {"http_502": 1.0}
    assert client.get("/units").status_code == 502
    httpx.post(faulty.admin_url + "/faults", json={})
    assert client.get("/units").status_code == 200


@pytest.mark.parametrize(
    "rates",
    [{"explode": 0.1}, {"http_500": 1.5}, {"http_500": "often"}, {"slow": True}],
    ids=["unknown", "above-one", "text", "bool"],
)
def test_invalid_rates_are_refused(rates: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="fault"):
        validate_rates(rates)
    with pytest.raises(ValueError):
        run_sandbox(SandboxSettings(faults=rates), world=TinyWorld()).__enter__()  # type: ignore[arg-type]


def test_malform_is_pure() -> None:
    records = [{"id": i, "status": 12, "day": "2026-01-01", "n": 1.5} for i in range(10)]
    frozen = [dict(r) for r in records]
    damaged = malform(records, "id", random.Random(1), 0.3)
    assert records == frozen
    assert sum(a != b for a, b in zip(damaged, records, strict=True)) == 3


def test_no_faults_configured_draws_nothing() -> None:
    faults = Faults({})
    assert not faults.decide().fired
