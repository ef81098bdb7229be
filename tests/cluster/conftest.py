"""Fixtures of the local cluster's tests: clients of the session's local cluster."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator

import pytest
from kubernetes import client, config

from setpoint.testing.background_cluster import BackgroundCluster
from setpoint.testing.plugin import NAMESPACE_PREFIX, NAMESPACE_RANDOM_BYTES
from tests.cluster.raw_api import RawAPI, raw_api


@pytest.fixture(scope="session")
def api_client(local_cluster: BackgroundCluster) -> Iterator[client.ApiClient]:
    """The official Python client, configured from the local cluster's kubeconfig."""
    api = config.new_client_from_config(config_file=str(local_cluster.kubeconfig_path))
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def core_v1(api_client: client.ApiClient) -> client.CoreV1Api:
    """CoreV1Api of the local cluster."""
    return client.CoreV1Api(api_client)


@pytest.fixture
def custom_objects(api_client: client.ApiClient) -> client.CustomObjectsApi:
    """CustomObjectsApi of the local cluster."""
    return client.CustomObjectsApi(api_client)


@pytest.fixture
async def api(local_cluster: BackgroundCluster) -> AsyncIterator[RawAPI]:
    """Raw HTTP access to the local cluster (status codes, headers, bodies)."""
    async with raw_api(local_cluster.url, local_cluster.token) as client_:
        yield client_


@pytest.fixture(scope="session")
def api_only_cluster() -> Iterator[BackgroundCluster]:
    """A second local cluster serving the API only (``controllers=False``): for tests of the API
    server alone (a status written by hand, a Deployment's spec and managedFields) that the
    controllers, rightly, would race."""
    cluster = BackgroundCluster(in_memory=True, controllers=False).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def api_only_namespace(api_only_cluster: BackgroundCluster) -> Iterator[str]:
    """A fresh namespace in :func:`api_only_cluster` (left Terminating: nothing empties it)."""
    name = NAMESPACE_PREFIX + secrets.token_hex(NAMESPACE_RANDOM_BYTES)
    api_only_cluster.create_namespace(name)
    try:
        yield name
    finally:
        api_only_cluster.delete_namespace(name)


@pytest.fixture
async def api_only(api_only_cluster: BackgroundCluster) -> AsyncIterator[RawAPI]:
    """Raw HTTP access to :func:`api_only_cluster`."""
    async with raw_api(api_only_cluster.url, api_only_cluster.token) as client_:
        yield client_


@pytest.fixture(scope="module")
def robust_cluster(local_cluster: BackgroundCluster) -> Iterator[BackgroundCluster]:
    """The session cluster with a ``robustness`` namespace for fuzzing tests."""
    local_cluster.create_namespace("robustness")
    try:
        yield local_cluster
    finally:
        local_cluster.delete_namespace("robustness")
