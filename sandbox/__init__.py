"""The simulated reservation service. Only the CLI starter and tests import it."""
