"""SQL models (staging, core, marts) and the code that builds them in DuckDB."""
