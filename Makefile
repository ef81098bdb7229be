# The single entry point: everything a fresh machine needs is installed from here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
RUNTIME_STAMP := $(VENV)/.runtime-stamp
PYTEST_ARGS ?=
# `make test` runs pytest on this many workers (pytest-xdist; each has its own local cluster),
# whole test files at a time so that a module's fixtures are set up once, in the order
# tests/conftest.py gives (files with a slow test first) rather than xdist's largest-file-first.
# TEST_WORKERS=0 runs the suite serially, in one process, as a bare `pytest` does.
TEST_WORKERS ?= 2

.PHONY: venv ansible-deps test lint format demo bench clean test-crash test-fuzz examples-config \
	test-install system-packages console-screenshots

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,bench,browser]'
	@touch $(STAMP) $(RUNTIME_STAMP)

venv: $(STAMP)

# What `make demo` runs needs setpoint alone, not the dev and bench extras (linters, type
# checker, peers, plots): a fresh machine gets to the demo in a fraction of the time.
$(RUNTIME_STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e .
	@touch $(RUNTIME_STAMP)

# Ansible-based operators (setpoint[ansible] and the kubernetes.core collection): `make test`
# needs them, `make demo` does not.
ANSIBLE_STAMP := $(VENV)/.ansible-stamp
$(ANSIBLE_STAMP): $(STAMP) pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[ansible]'
	$(BIN)/python -m setpoint.ansible.install_collections
	@touch $(ANSIBLE_STAMP)

ansible-deps: $(ANSIBLE_STAMP)

# bubblewrap sandboxes `--run-pods` containers (docs/local-cluster.md); without it only admins
# may create pods there, and the isolation tests are skipped. Chromium and its chromedriver
# (Debian's, matched versions) run the console's browser tests (tests/console/test_browser*.py);
# without them those are skipped. Installed as root only.
system-packages:
	@if ! command -v bwrap >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && \
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null; } || \
		echo "bubblewrap not installed: under --run-pods only admins may create pods"; \
	fi
	@if ! { command -v chromium && command -v chromedriver; } >/dev/null && [ "$$(id -u)" = 0 ] && \
		command -v apt-get >/dev/null; then \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null && \
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null; } || \
		echo "chromium not installed: the console's browser tests are skipped"; \
	fi

# The console's screenshots in docs/images/console-*.png, taken by its browser tests (those of
# the demo need the operators' trace and the local cluster's audit feed).
console-screenshots: venv system-packages
	SETPOINT_CONSOLE_SCREENSHOTS=1 $(BIN)/pytest -q tests/console/test_browser.py \
		tests/console/test_browser_demo_trace.py $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check setpoint tests bench examples
	$(BIN)/ruff format --check setpoint tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports

format: venv
	$(BIN)/ruff check --fix setpoint tests bench examples
	$(BIN)/ruff format setpoint tests bench examples

test: lint ansible-deps system-packages
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The README tour: a local cluster, the example operators and their samples, converging live.
# `make demo ARGS=--once` exits 0 once everything converged (1 naming what did not).
ARGS ?=
demo: $(RUNTIME_STAMP)
	$(BIN)/setpoint demo examples $(ARGS)

.PHONY: bench-check bench-micro soak

# setpoint against Kopf and a raw client: table on stdout, bench/results/latest.json.
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
	$(BIN)/python -m bench.port_forward
	$(BIN)/python -m bench.node_failure

# The operator soak (not in `make test`: 10+ minutes): the bench's Widget operator and
# its API server under churn, exits 1 when RSS, fds or tasks grow > 10 % after warm-up.
soak: venv
	$(BIN)/python -m bench.operator_soak $(SOAK_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis

# Long robustness runs of the local cluster: 20 kill -9 rounds, a longer fuzz.
test-crash: venv
	SETPOINT_LONG_RUNS=1 $(BIN)/pytest -m slow tests/cluster/hardening/test_crash_suite.py $(PYTEST_ARGS)

test-fuzz: venv
	SETPOINT_LONG_RUNS=1 FUZZ_EXAMPLES=3000 $(BIN)/pytest -m slow tests/cluster/hardening/test_fuzz.py $(PYTEST_ARGS)

# setpoint as a user installs it (slow: two venvs): build the sdist and wheel, install the
# wheel in a fresh venv outside the checkout, `setpoint init demo-op --kind Website`,
# `setpoint dev` to the first reconcile line and the new project's own `make test`.
test-install: venv
	$(BIN)/pytest -m slow tests/cli/test_install_from_wheel.py $(PYTEST_ARGS)

# Regenerate every example's config/ from its code (a test checks that this changes nothing).
examples-config: venv
	$(BIN)/python -m tests.examples.projects
