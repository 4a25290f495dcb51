"""The peer read of `bench.extract`: the same lists through dlt's `rest_api` source."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping
from typing import Any


def read_with_dlt(
    sandbox: Any, page_size: int, lists: Mapping[str, tuple[str, str]]
) -> dict[str, Any]:
    """The same lists with dlt's rest_api source (page-number paging, its own parallelism)."""
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    import dlt
    from dlt.sources.helpers.rest_client.auth import OAuth2ClientCredentials
    from dlt.sources.rest_api import rest_api_source

    auth = OAuth2ClientCredentials(
        access_token_url=sandbox.base_url + "/authenticate",
        client_id="reservoir-sandbox",
        client_secret=sandbox.secret,
        access_token_request_data={"scope": "SBX"},
    )
    resources: list[Any] = []
    for name, (path, _) in lists.items():
        params: dict[str, Any] = {"size": page_size}
        if name == "accommodation_types":
            params["returnSections"] = "CAPACITIES"
        resources.append({"name": name, "endpoint": {"path": path, "params": params}})
    resources.append(
        {
            "name": "rates",
            "endpoint": {
                "path": "accommodationtypes/{resource_id}/rates",
                "params": {
                    "size": page_size,
                    "resource_id": {
                        "type": "resolve",
                        "resource": "accommodation_types",
                        "field": "resourceId",
                    },
                },
            },
        }
    )
    resources.append(
        {
            "name": "journal_entries",
            "endpoint": {
                "path": "companies/journalreports/{report_id}/entries",
                "params": {
                    "size": page_size,
                    "report_id": {
                        "type": "resolve",
                        "resource": "journal_reports",
                        "field": "journalReportId",
                    },
                },
            },
        }
    )
    source = rest_api_source(
        {
            "client": {
                "base_url": sandbox.base_url + "/",
                "auth": auth,
                "paginator": {
                    "type": "page_number",
                    "base_page": 0,
                    "page_param": "page",
                    "total_path": "totalPages",
                },
            },
            "resource_defaults": {"endpoint": {"data_selector": "content"}, "parallelized": True},
            "resources": resources,
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        pipeline = dlt.pipeline(pipeline_name="bench_dlt", pipelines_dir=tmp)
        sandbox.reset()
        started = time.perf_counter()
        info = pipeline.extract(source)
        wall = time.perf_counter() - started
        counts = {}
        try:
            metrics = info.metrics[info.loads_ids[0]][0]
            counts = {k: v.items_count for k, v in metrics["table_metrics"].items()}
        except (AttributeError, IndexError, KeyError, TypeError):
            pass
    server = sandbox.stats()
    requests = server["requests"] - server["endpoints"].get("POST /service/v2/authenticate", 0)
    return {
        "records": counts,
        "records_total": sum(counts.values()),
        "requests": requests,
        "wall_seconds": wall,
        "peak_in_flight": server["peakInFlight"],
        "throttled": server["throttled"],
    }
