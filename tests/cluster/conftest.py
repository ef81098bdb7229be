"""Fixtures of the local cluster's tests: clients of the session's local cluster."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from kubernetes import client, config

from setpoint.testing.background_cluster import BackgroundCluster
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


@pytest.fixture(scope="module")
def robust_cluster(local_cluster: BackgroundCluster) -> Iterator[BackgroundCluster]:
    """The session cluster with a ``robustness`` namespace for fuzzing tests."""
    local_cluster.create_namespace("robustness")
    try:
        yield local_cluster
    finally:
        local_cluster.delete_namespace("robustness")
