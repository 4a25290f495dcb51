"""The Parquet lake: table schemas, part files, the current-state rule, run state and locks."""
