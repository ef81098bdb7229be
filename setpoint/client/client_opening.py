"""What ``Client.from_*`` return: awaitable, and usable with ``async with``."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from setpoint.client.client import Client

__all__ = ["ClientOpening"]


class ClientOpening:
    """What ``Client.from_*`` return: ``await`` it for a :class:`Client`, or use ``async with``.

    ``async with Client.from_kubeconfig() as client:`` closes the client on exit;
    ``client = await Client.from_kubeconfig()`` leaves closing to the caller.
    """

    __slots__ = ("_client", "_open")

    def __init__(self, open_client: Callable[[], Coroutine[Any, Any, Client]]) -> None:
        self._open = open_client
        self._client: Client | None = None

    def __await__(self) -> Generator[Any, None, Client]:
        return self._open().__await__()

    async def __aenter__(self) -> Client:
        self._client = await self._open()
        return self._client

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()
