"""`reservoir serve`: the dashboard with filters and drill-down, and the metrics feed, over HTTP.

`app.create_app` builds the Starlette application (the page, /static, /api); `feed` answers the
API (metric definitions, metrics by dimensions, mart slices as JSON, CSV or Parquet). Each
request opens the warehouse read-only and closes it, so a run's publish (a rename) is never
blocked and the next request reads the new file.
"""

from __future__ import annotations

from pipelines.serve.app import create_app

__all__ = ["create_app"]
