"""A small aiohttp server bound to a Go-style bind address, shared by the probe and metrics servers.

Bind addresses are spelled as in controller-runtime: `":8080"` (all interfaces), `"127.0.0.1:0"`
(an ephemeral port, handy in tests), `"[::1]:8081"`, and `"0"` (or `""`) to disable the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["DISABLED", "BindAddress", "HttpEndpoint", "parse_bind_address"]

# The spelling controller-runtime uses to switch a server off.
DISABLED = "0"


@dataclass(frozen=True)
class BindAddress:
    """Where to listen: host None means every interface."""

    host: str | None
    port: int


def parse_bind_address(address: str, *, option: str = "bind address") -> BindAddress | None:
    """Parse `host:port` / `:port` / `[v6]:port`; None when the address disables the server.

    Raises ValueError naming `option` when the address cannot be used.
    """
    text = address.strip()
    if text in (DISABLED, ""):
        return None
    host, sep, port_text = text.rpartition(":")
    if not sep:
        raise ValueError(
            f"{option}: {address!r} is not host:port (use ':8080' for every interface, "
            "'127.0.0.1:0' for an ephemeral port, or '0' to disable)"
        )
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"{option}: port {port_text!r} in {address!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"{option}: port {port} in {address!r} is outside 0-65535")
    return BindAddress(host=host or None, port=port)


class HttpEndpoint:
    """Runs one aiohttp application on one bind address; `port` is known after `start()`."""

    def __init__(self, app: web.Application, address: BindAddress) -> None:
        self.app = app
        self.address = address
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        """A URL a local client can reach the server at (loopback when bound to all interfaces)."""
        if self.port is None:
            raise RuntimeError("the server is not started")
        host = self.address.host or "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        """Bind and serve; raises OSError when the address is taken."""
        # Imported when a server starts: not on the path to the first request.
        from aiohttp import web

        runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.address.host, self.address.port, reuse_address=True)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        for sockname in runner.addresses:
            if isinstance(sockname, tuple) and len(sockname) >= 2:
                self.port = int(sockname[1])
                break

    async def stop(self) -> None:
        """Stop listening and close open connections."""
        runner, self._runner = self._runner, None
        self.port = None
        if runner is not None:
            await runner.cleanup()
