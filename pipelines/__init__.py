"""reservoir: the Dagster code location."""
