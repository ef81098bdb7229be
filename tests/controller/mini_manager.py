"""The smallest manager the builder protocol allows: a real cache and client, controllers."""

from __future__ import annotations

from setpoint.cache import Cache
from setpoint.client import Client
from setpoint.controller.controller import Controller


class MiniManager:
    """Starts the cache and its controllers together; stops them in reverse."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.cache = Cache(client)
        self.controllers: list[Controller] = []

    def add(self, controller: Controller) -> None:
        self.controllers.append(controller)

    async def __aenter__(self) -> MiniManager:
        await self.cache.start()
        for controller in self.controllers:
            await controller.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for controller in self.controllers:
            await controller.stop(timeout=5)
        await self.cache.stop()
