"""Fixtures of the admission tests: a cluster of their own (webhooks are cluster-wide, so
they must not reach the session cluster's other tests) and a scriptable webhook server."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.admission.webhook_server import WebhookServer, webhook_server
from tests.cluster.raw_api import RawAPI, raw_api

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


@pytest.fixture(scope="package")
def admission_cluster() -> Iterator[BackgroundCluster]:
    """A local cluster (API only) for the admission tests."""
    cluster = BackgroundCluster(in_memory=True, controllers=False).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def namespace(admission_cluster: BackgroundCluster) -> Iterator[str]:
    """A fresh namespace of the admission cluster."""
    name = "adm-" + secrets.token_hex(4)
    admission_cluster.create_namespace(name)
    try:
        yield name
    finally:
        admission_cluster.delete_namespace(name)


@pytest.fixture
async def api(admission_cluster: BackgroundCluster, namespace: str) -> AsyncIterator[RawAPI]:
    """Raw HTTP access to the admission cluster; deletes the webhook configurations a test
    left behind before :func:`namespace` is deleted (a namespace deletion goes to webhooks
    too, and the cluster helper deleting it blocks this loop, where test webhooks run)."""
    async with raw_api(admission_cluster.url, admission_cluster.token) as client:
        try:
            yield client
        finally:
            for path in (MUTATING, VALIDATING):
                await client.request("DELETE", path)


@pytest.fixture
async def hooks() -> AsyncIterator[WebhookServer]:
    """A started webhook server."""
    async with webhook_server() as server:
        yield server
