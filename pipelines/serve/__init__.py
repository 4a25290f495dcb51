"""`reservoir serve`: the dashboard with filters and drill-down, and the metrics feed, over HTTP.

`app.create_app` builds the Starlette application (the page, /static, /api); `feed` answers the
API (metric definitions, metrics by dimensions, mart slices as JSON, CSV or Parquet); `cli` holds
the `serve` and `export` commands and `commands` what they do. Each request opens the warehouse
read-only and closes it, so a run's publish (a rename) is never blocked and the next request
reads the new file. (Nothing is imported here, so that the CLI starts fast.)
"""
