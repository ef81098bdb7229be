"""Fixtures of the controller tests: an API client on the session's local cluster.

``local_cluster`` and ``namespace`` come from ``setpoint.testing.plugin`` (registered by the root
conftest).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from setpoint.client import Client, ClientConfig, StaticToken
from setpoint.testing.background_cluster import BackgroundCluster


@pytest.fixture
async def client(local_cluster: BackgroundCluster) -> AsyncIterator[Client]:
    """An API client on the local cluster, opened on the test's event loop."""
    config = ClientConfig(server=local_cluster.url, credentials=StaticToken(local_cluster.token))
    api = await Client.from_config(config, field_manager="setpoint-controller-tests")
    try:
        yield api
    finally:
        await api.close()
