"""Extract-and-normalise assets, one module per source area, built from specs."""
