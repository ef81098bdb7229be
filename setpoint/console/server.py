"""Run the console: bind 127.0.0.1 (a free port by default) and say the URL with its token."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web

from setpoint.client import Client
from setpoint.console.access import TOKEN_PARAMETER, new_token
from setpoint.console.app import ConsoleState, build_app
from setpoint.console.operators import OperatorWatch, normalize_operator_url

__all__ = ["LOOPBACK", "ConsoleServer", "ConsoleSettings"]

#: The only address the console listens on.
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class ConsoleSettings:
    """What one console shows: a kubeconfig's cluster and some operators' debug endpoints."""

    kubeconfig: str | os.PathLike[str] | None = None
    context: str | None = None
    operators: tuple[str, ...] = ()
    port: int = 0
    token: str = field(default_factory=new_token)


class ConsoleServer:
    """The console for one run: ``url = await server.start()``, then ``await server.stop()``."""

    def __init__(self, settings: ConsoleSettings) -> None:
        self.settings = settings
        self.operator_urls = [normalize_operator_url(url) for url in settings.operators]
        self._client: Client | None = None
        self._http: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """The URL to open, token included."""
        return f"http://{LOOPBACK}:{self.port}/?{TOKEN_PARAMETER}={self.settings.token}"

    async def start(self) -> str:
        """Connect, listen and return :attr:`url`."""
        self._client = await Client.from_kubeconfig(
            self.settings.kubeconfig, context=self.settings.context, max_retries=1
        )
        self._http = aiohttp.ClientSession()
        watch = OperatorWatch(self.operator_urls, self._http)
        cluster = self._client.config.server
        if self.settings.kubeconfig is not None:
            cluster = f"{cluster} ({Path(self.settings.kubeconfig).name})"
        state = ConsoleState(self._client, watch, cluster_name=cluster)
        app = build_app(state, self.settings.token)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, self.settings.port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1]) if sockets else self.settings.port
        return self.url

    async def stop(self) -> None:
        """Stop listening and close the connections."""
        if self._runner is not None:
            await self._runner.cleanup()
        if self._http is not None:
            await self._http.close()
        if self._client is not None:
            await self._client.close()
