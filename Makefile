# The single entry point: everything a fresh machine needs is installed from here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: venv test lint format demo bench clean test-crash test-fuzz examples-config system-packages

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,bench]'
	@touch $(STAMP)

venv: $(STAMP)

# bubblewrap sandboxes `--run-pods` containers (docs/local-cluster.md); without it only admins
# may create pods there, and the isolation tests are skipped. Installed as root only.
system-packages:
	@if ! command -v bwrap >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && \
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null; } || \
		echo "bubblewrap not installed: under --run-pods only admins may create pods"; \
	fi

lint: venv
	$(BIN)/ruff check setpoint tests bench examples
	$(BIN)/ruff format --check setpoint tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports

format: venv
	$(BIN)/ruff check --fix setpoint tests bench examples
	$(BIN)/ruff format setpoint tests bench examples

test: lint system-packages
	$(BIN)/pytest $(PYTEST_ARGS)

# The README tour: a local cluster, the example operators and their samples, converging live.
# `make demo ARGS=--once` exits 0 once everything converged (1 naming what did not).
ARGS ?=
demo: venv
	$(BIN)/setpoint demo examples $(ARGS)

.PHONY: bench-check bench-micro soak

# setpoint against Kopf and a raw client (issue 12): table on stdout, bench/results/latest.json.
bench: venv
	$(BIN)/python -m bench $(BENCH_ARGS)

# The pre-merge gate (not in `make test`: too long for CI): a quick run's ratios against
# bench/results/baseline.json.
bench-check: venv
	$(BIN)/python -m bench.peers.check

# Micro-benchmarks of single components (API server, runtime, OpenAPI, controllers).
bench-micro: venv
	$(BIN)/python -m bench.apiserver
	$(BIN)/python -m bench.runtime
	$(BIN)/python -m bench.openapi
	$(BIN)/python -m bench.cluster

# The operator soak (issue 14; not in `make test`: 10+ minutes): the bench's Widget operator and
# its API server under churn, exits 1 when RSS, fds or tasks grow > 10 % after warm-up.
soak: venv
	$(BIN)/python -m bench.operator_soak $(SOAK_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis

# Long robustness runs of the local cluster (issue 13): 20 kill -9 rounds, a longer fuzz.
test-crash: venv
	SETPOINT_LONG_RUNS=1 $(BIN)/pytest -m slow tests/cluster/hardening/test_crash_suite.py $(PYTEST_ARGS)

test-fuzz: venv
	SETPOINT_LONG_RUNS=1 FUZZ_EXAMPLES=3000 $(BIN)/pytest -m slow tests/cluster/hardening/test_fuzz.py $(PYTEST_ARGS)

# Regenerate every example's config/ from its code (a test checks that this changes nothing).
examples-config: venv
	$(BIN)/python -m tests.examples.projects
