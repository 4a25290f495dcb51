# reservoir: the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: setup run test lint dev bench chaos clean

# uv installs the pinned packages of pyproject.toml into the venv: on a machine with an empty
# package cache it took 35 s where pip took 263 s (docs/benchmarks.md, "Session 12: the test
# suite on a clean clone"). It is itself pinned here; pip is only its bootstrap.
# The packages' .pyc are written once, here: without them (uv writes none, and a shell with
# PYTHONDONTWRITEBYTECODE set never caches any) every process compiles its imports again, ~2.7
# CPU s for each one that imports the pipeline (docs/benchmarks.md, "Session 16: the pipeline
# process end to end" and "... the test suite under eight minutes"). Not uv's
# `--compile-bytecode`, which compiles all ~14,500 modules of the venv: a third of them are
# libraries' own test suites and packages nothing here imports (cfn-lint's sympy and networkx,
# pulled in by moto[server]; pip, setuptools; pyiceberg, for a bench only), ~7 CPU s of a clean
# clone's setup (docs/benchmarks.md, "Session 19: the test suite under eight minutes"). A module
# left out still works: the process that imports it compiles it.
UV_VERSION := 0.13.9
NOT_COMPILED := '/(sympy|mpmath|networkx|cfnlint|pip|setuptools|pyiceberg|tests)/'

# The C extensions (assets/_columns.c, sandbox/world/_rowjoin.c) are built by the install; a
# change to one reinstalls.
$(STAMP): pyproject.toml assets/_columns.c sandbox/world/_rowjoin.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(BIN)/uv pip install --quiet --python $(BIN)/python -e '.[dev]'
	$(BIN)/python -m compileall -q -j 0 -x $(NOT_COMPILED) \
		"$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

setup: $(STAMP)

## Run the main job against the embedded sandbox (or RESERVOIR_BASE_URL when set).
run: $(STAMP)
	$(BIN)/reservoir run

## Run the test suite (what CI runs). Two workers on two cores; three measured no faster on a
## clean clone (544 s of pytest against 534, and 8 % more CPU; docs/benchmarks.md, session 12).
TEST_WORKERS ?= 2
# the project's own packages, compiled before the tests: each test's subprocesses import them
PACKAGES := assets lake warehouse service pipelines sandbox bench
test: $(STAMP)
	bash scripts/ensure-chromium.sh
	bash scripts/ensure-postgres.sh
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m compileall -q -j 0 $(PACKAGES)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not chaos" --durations=30

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## Dagster UI on http://127.0.0.1:3000 with workspace.yaml
dev: $(STAMP)
	$(BIN)/reservoir dev

bench: $(STAMP)
	$(BIN)/python -m bench.run_all

chaos: $(STAMP)
	CHAOS_REPORT=1 $(BIN)/python -m pytest -m chaos -p no:xdist tests

clean:
	rm -rf data .pytest_cache .ruff_cache
