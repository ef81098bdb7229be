"""pytest plugin: one local cluster per test session, and a fresh namespace per test.

Enable it with ``pytest_plugins = ["setpoint.testing.plugin"]`` in ``conftest.py``.

- ``local_cluster`` (session): a :class:`BackgroundCluster` with ``.url``, ``.token`` and
  ``.kubeconfig_path``; it runs in its own thread and event loop, so sync tests and async tests
  with any event-loop scope can use it. It keeps an audit log (``.audit_log_path``, Metadata
  level, without the admin's own requests) that ``setpoint.testing.observed_rbac`` reads.
- ``namespace`` (function): the name of a namespace created for the test and deleted after it
  (deleting it deletes everything the test left in it).
- ``kubeconfig`` (session): the path of the local cluster's kubeconfig, for ``run_operator``.
- ``client`` (function, async): a ``setpoint.Client`` on the local cluster, opened on the test's
  event loop and closed after it.
- ``fake_clock`` (function): a fresh ``FakeClock`` to pass to ``run_operator(clock=...)``.
- ``manual_clock_cluster`` (session): a second local cluster, started on first use, whose
  clock moves only when told to (``advance_clock``/``set_clock`` of
  :mod:`setpoint.testing.simulation`, or ``setpoint cluster clock`` with its kubeconfig);
  run operators on it with ``run_operator(..., follow_cluster_clock=True)``.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Final

import pytest
import pytest_asyncio

from setpoint.api.clock import FakeClock
from setpoint.client.client import Client
from setpoint.testing.background_cluster import BackgroundCluster

#: ``system:masters``: the admin token's group, whose own requests the session log leaves out.
PRIVILEGED_GROUP: Final = "system:masters"

#: Test namespaces are ``test-`` plus random hex: unique, and valid DNS labels.
NAMESPACE_PREFIX: Final = "test-"
NAMESPACE_RANDOM_BYTES: Final = 5


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundCluster]:
    """An in-memory local cluster shared by the whole test session, with an audit log."""
    audit_log = tmp_path_factory.mktemp("setpoint-audit") / "audit.jsonl"
    # The admin's own requests (fixtures, test clients) are left out: they are many, and not
    # what an operator running as its ServiceAccount needs.
    cluster = BackgroundCluster(
        in_memory=True, audit_log=audit_log, audit_omit_groups=[PRIVILEGED_GROUP]
    ).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def namespace(local_cluster: BackgroundCluster) -> Iterator[str]:
    """A fresh namespace in the session's local cluster, deleted after the test."""
    name = NAMESPACE_PREFIX + secrets.token_hex(NAMESPACE_RANDOM_BYTES)
    local_cluster.create_namespace(name)
    try:
        yield name
    finally:
        local_cluster.delete_namespace(name)


@pytest.fixture(scope="session")
def kubeconfig(local_cluster: BackgroundCluster) -> str:
    """The path of the session cluster's kubeconfig."""
    return str(local_cluster.kubeconfig_path)


@pytest_asyncio.fixture
async def client(local_cluster: BackgroundCluster) -> AsyncIterator[Client]:
    """An API client on the session's local cluster, for one test."""
    async with await Client.from_kubeconfig(str(local_cluster.kubeconfig_path)) as api:
        yield api


@pytest.fixture(scope="session")
def manual_clock_cluster() -> Iterator[BackgroundCluster]:
    """An in-memory local cluster on a manual clock (``serve --clock manual``), per session."""
    cluster = BackgroundCluster(in_memory=True, clock=FakeClock()).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def fake_clock() -> FakeClock:
    """A clock that stands still until the test calls ``advance()``."""
    return FakeClock()
