"""Fixtures of the console's tests: the console on the session's local cluster, and a fake of
the trace contract's endpoints (tests/console/contract_fake.py) as its operator and audit feed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest_asyncio
from aiohttp import web

from setpoint.client import Client, ClientConfig
from setpoint.console.access import new_token
from setpoint.console.app import ConsoleState, build_app
from setpoint.console.operators import OperatorWatch
from setpoint.testing.background_cluster import BackgroundCluster
from tests.console.contract_fake import ContractFake


@dataclass
class RunningConsole:
    """A console app served on 127.0.0.1 and an HTTP session that has its cookie."""

    url: str
    token: str
    http: aiohttp.ClientSession
    state: ConsoleState

    async def json(self, path: str, **params: str) -> dict:  # type: ignore[type-arg]
        async with self.http.get(self.url + path, params=params) as got:
            assert got.status == 200, await got.text()
            return await got.json()  # type: ignore[no-any-return]


@pytest_asyncio.fixture
async def contract_fake() -> AsyncIterator[ContractFake]:
    fake = ContractFake()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


async def open_console(
    kubeconfig: str, operators: list[str], audit_url: str | None
) -> tuple[web.AppRunner, RunningConsole, list[Client]]:
    client = await Client.from_kubeconfig(kubeconfig)
    clients = [client]
    audit = None
    if audit_url is not None:
        audit = await Client.from_config(ClientConfig(server=audit_url))
        clients.append(audit)
    http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    state = ConsoleState(client, OperatorWatch(operators, http), audit_client=audit)
    token = new_token()
    runner = web.AppRunner(build_app(state, token), shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}"
    async with http.get(f"{url}/?token={token}") as first:  # sets the cookie
        assert first.status == 200
    return runner, RunningConsole(url, token, http, state), clients


@pytest_asyncio.fixture
async def console(
    local_cluster: BackgroundCluster, contract_fake: ContractFake
) -> AsyncIterator[RunningConsole]:
    """The console on the local cluster, with the fake as its operator and audit feed."""
    runner, running, clients = await open_console(
        str(local_cluster.kubeconfig_path), [contract_fake.url], contract_fake.url
    )
    try:
        yield running
    finally:
        await runner.cleanup()
        await running.http.close()
        for client in clients:
            await client.close()
