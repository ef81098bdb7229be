"""The files ``setpoint init`` and ``setpoint create api`` write, as ``string.Template`` texts.

``$``-placeholders: ``name`` (the project), ``package`` (its Python package), ``domain``,
``setpoint_requirement`` and ``setpoint_testing_requirement`` (how pip finds setpoint),
``wheels`` (the wheels pip is given with ``--find-links`` when the directory exists), and for
an API ``group`` (full group name), ``version``, ``kind``, ``kind_lower``, ``plural``, ``scope``.
"""

from __future__ import annotations

PYPROJECT = """\
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "$name"
version = "0.1.0"
description = "The $name operator, built with setpoint."
requires-python = ">=3.11"
dependencies = ["$setpoint_requirement"]

[project.optional-dependencies]
testing = ["$setpoint_testing_requirement"]

[tool.setuptools.packages.find]
include = ["$package*"]

[tool.setpoint]
# Read by `setpoint create api`: the Python package and the domain of the API groups.
package = "$package"
domain = "$domain"
namespaced = $namespaced

[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
pythonpath = ["."]
testpaths = ["tests"]
"""

MAKEFILE = """\
# $name: the operator's everyday commands (created by `setpoint init`).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $$(VENV)/bin
IMG    ?= $name:latest
TARGET := $package.operator
CONFIG := config
# setpoint's wheel, when it comes from no package index (see `setpoint init --setpoint-spec`).
FIND_LINKS := $$(addprefix --find-links ,$$(wildcard $wheels))

.PHONY: venv test run dev generate install uninstall deploy undeploy docker-build bundle

$$(BIN)/setpoint:
\t$$(PYTHON) -m venv $$(VENV)
\t$$(BIN)/pip install --quiet $$(FIND_LINKS) -e '.[testing]'

venv: $$(BIN)/setpoint

test: venv            ## the tests, against a local cluster (no cluster needed)
\t$$(BIN)/python -m pytest

run: venv             ## run the operator against the current kubeconfig's cluster
\t$$(BIN)/setpoint run $$(TARGET)

dev: venv             ## local cluster + CRDs + samples + the operator, reloaded on change
\t$$(BIN)/setpoint dev $$(TARGET)

generate: venv        ## CRDs, RBAC, kustomize config, Helm chart, Dockerfile under config/
\t$$(BIN)/setpoint generate $$(TARGET) -o $$(CONFIG) --image $$(IMG)$generate_flags

install: venv         ## the CRDs on the current cluster
\t$$(BIN)/setpoint install $$(TARGET)

uninstall: venv
\t$$(BIN)/setpoint uninstall $$(TARGET)

deploy: generate      ## the whole operator on the current cluster
\tkubectl apply -k $$(CONFIG)/default

undeploy:
\tkubectl delete -k $$(CONFIG)/default

docker-build: generate
\tdocker build -f $$(CONFIG)/Dockerfile -t $$(IMG) .

bundle: venv          ## an OLM bundle in bundle/ (check it: setpoint check bundle bundle)
\t$$(BIN)/setpoint generate bundle $$(TARGET) -o bundle
"""

README = """\
# $name

A Kubernetes operator built with [setpoint](https://github.com/) (created by `setpoint init`).

```sh
make test        # the tests, against setpoint's local cluster: no cluster needed
make dev         # a local cluster, the CRDs, the samples and the operator, reloaded on change
make generate    # config/: CRDs, RBAC, kustomize, Helm chart, Dockerfile
make deploy      # everything on the current kubeconfig's cluster
```

Add a resource with `setpoint create api --group G --version V --kind K`: it writes the typed
model (`$package/api/`), a reconciler (`$package/controllers/`), a sample and a test.
"""

GITIGNORE = """\
.venv/
__pycache__/
*.egg-info/
.pytest_cache/
/bundle/
"""

# The image is built from the project root (`make docker-build`): only what `pip install .`
# needs goes into the build context (the local venv would be large and unusable there).
DOCKERIGNORE = """\
.venv/
.git/
**/__pycache__/
*.egg-info/
.pytest_cache/
bundle/
"""

CI_WORKFLOW = """\
name: test
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: make test
      - run: make generate && git diff --exit-code config/
"""

PACKAGE_INIT = '''\
"""The $name operator."""
'''

OPERATOR = '''\
"""The $name operator: `setpoint run $package.operator` runs it."""

import setpoint

op = setpoint.Operator("$name")

# Importing the controllers registers their reconcilers on `op`.
from $package import controllers  # noqa: E402,F401
'''

API_INIT = '''\
"""The custom resources of $name, one module per group version and kind."""
'''

CONTROLLERS_INIT = '''\
"""The reconcilers of $name (each module registers one on the operator)."""
'''

CONFTEST = '''\
"""Tests run against setpoint's local cluster (one per test session)."""

pytest_plugins = ["setpoint.testing.plugin"]
'''

TESTS_INIT = ""

MODEL = '''\
"""$kind ($group/$version)."""

from pydantic import BaseModel, Field

from setpoint.api.resources import CustomResource, PrinterColumn


class ${kind}Spec(BaseModel):
    """What a $kind should be. Edit the fields, then `make generate`."""

    replicas: int = Field(default=1, ge=0, description="How many of it to run.")


class ${kind}Status(BaseModel):
    """What the operator observed (fields are camelCase in the CRD: observedGeneration)."""

    observed_generation: int | None = None
    conditions: list[dict[str, object]] = []


class $kind(
    CustomResource,
    group="$group",
    version="$version",
    kind="$kind",
    scope="$scope",
    printer_columns=[
        PrinterColumn("Ready", '.status.conditions[?(@.type=="Ready")].status'),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
    ],
):
    """$kind is the Schema for the $plural API."""

    spec: ${kind}Spec = ${kind}Spec()
    status: ${kind}Status | None = None
'''

CONTROLLER = '''\
"""Reconciles each $kind: level-based, so it reads the whole state each time."""

import logging

import setpoint
from $package.api.${version}.${kind_lower} import $kind
from $package.operator import op

log = logging.getLogger(__name__)

# from setpoint import kinds
# To own a child (re-reconciled when it changes), add owns=[kinds.ConfigMap] and, below:
#     await ctx.apply_owned({"apiVersion": "v1", "kind": "ConfigMap",
#                            "metadata": {"name": obj.metadata.name}, "data": {...}})


@op.reconciler(for_=$kind)
async def reconcile_${kind_lower}(ctx: setpoint.Context, request: setpoint.Request) -> None:
    obj = await ctx.get()
    if obj is None:
        log.info("$kind %s: gone", request)  # owned children go with it (garbage collection)
        return
    await ctx.patch_status(
        {"observedGeneration": obj.metadata.generation},
        conditions=[{"type": "Ready", "status": "True", "reason": "Reconciled",
                     "message": "the $kind is reconciled"}],
    )
    log.info("$kind %s: Ready (generation %s)", request, obj.metadata.generation)
'''

TEST = '''\
"""$kind: the operator marks it Ready."""

from $package.api.${version}.${kind_lower} import $kind, ${kind}Spec
from $package.operator import op
from setpoint.testing import install_crds, run_operator, wait_for


async def test_${kind_lower}_becomes_ready(client, kubeconfig, namespace):
    await install_crds(client, $kind)
    async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace):
        created = await client.create(
            $kind(metadata={"name": "example", "namespace": namespace}, spec=${kind}Spec())
        )
        ready = await wait_for(
            lambda: client.get($kind, "example", namespace=namespace),
            lambda obj: obj.status is not None
            and any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in obj.status.conditions),
            what="the $kind to be Ready",
        )
    assert ready.status.observed_generation == created.metadata.generation
'''
