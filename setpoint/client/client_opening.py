"""What ``Client.from_*`` return: awaitable, and usable with ``async with``."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["ClientOpening", "Closable"]


class Closable(Protocol):
    """What an opened client must offer for ``async with`` (a :class:`Client` does)."""

    async def close(self) -> None: ...


OpenedClient = TypeVar("OpenedClient", bound=Closable)


class ClientOpening(Generic[OpenedClient]):
    """What ``Client.from_*`` return: ``await`` it for a :class:`Client`, or use ``async with``.

    Generic in the client it opens, so that this module need not import the client's.

    ``async with Client.from_kubeconfig() as client:`` closes the client on exit;
    ``client = await Client.from_kubeconfig()`` leaves closing to the caller.
    """

    __slots__ = ("_client", "_open")

    def __init__(self, open_client: Callable[[], Coroutine[Any, Any, OpenedClient]]) -> None:
        self._open = open_client
        self._client: OpenedClient | None = None

    def __await__(self) -> Generator[Any, None, OpenedClient]:
        return self._open().__await__()

    async def __aenter__(self) -> OpenedClient:
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
