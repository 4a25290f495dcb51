"""Ingestion, free of Dagster: the endpoint catalogue and the one landing engine for every run mode."""
