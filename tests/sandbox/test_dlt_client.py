"""A third-party client (dlt's `rest_api` source) can page the sandbox to the end."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.runner import SandboxHandle
from tests.sandbox.conftest import authenticate

pytestmark = pytest.mark.sandbox


def _source(handle: SandboxHandle, path: str, size: int) -> Any:
    from dlt.sources.rest_api import rest_api_source

    token = authenticate(handle).split(" ", 1)[1]
    return rest_api_source(
        {
            "client": {
                "base_url": handle.base_url + "/",
                "auth": {"type": "bearer", "token": token},
                "paginator": {
                    "type": "page_number",
                    "base_page": 0,
                    "page_param": "page",
                    "total_path": "totalPages",
                },
            },
            "resources": [
                {
                    "name": "items",
                    "endpoint": {
                        "path": path,
                        "params": {"size": size},
                        "data_selector": "content",
                    },
                }
            ],
        }
    )


def test_dlt_pages_a_list_to_the_end(tiny_sandbox: SandboxHandle) -> None:
    items = list(_source(tiny_sandbox, "customers", 7).resources["items"])
    assert sorted(i["customerId"] for i in items) == list(range(1, 26))


def test_dlt_on_the_generated_world(world_sandbox: SandboxHandle) -> None:
    world = world_sandbox.world
    with world.lock:
        total = len(world.keys("customers"))
    items = list(_source(world_sandbox, "customers", 2000).resources["items"])
    assert len(items) == total
