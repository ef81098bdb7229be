"""The per-run token that guards every page, asset and API call of the console.

As Jupyter does: the URL printed at start carries ``?token=...``; the first request with it
sets an HttpOnly cookie, so that links, assets and the page's own requests need no token. A
request without either gets 403 with a one-line reason. Requests whose ``Host`` is not the
loopback address the console listens on are refused too (a web page elsewhere cannot reach
the console through DNS rebinding).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

__all__ = ["COOKIE_PREFIX", "TOKEN_PARAMETER", "cookie_name", "new_token", "token_middleware"]

#: The query parameter of the printed URL.
TOKEN_PARAMETER = "token"
#: The cookie set after the first visit with the token is this plus the port: cookies are per
#: host, not per port, and two consoles on one machine must not overwrite each other's.
COOKIE_PREFIX = "setpoint-console-token-"
#: Bytes of randomness in a token (as Jupyter's 24).
TOKEN_BYTES = 24

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def new_token() -> str:
    """A fresh random token for one run."""
    return secrets.token_hex(TOKEN_BYTES)


def cookie_name(port: int | None) -> str:
    """The token cookie's name for the console on ``port``."""
    return f"{COOKIE_PREFIX}{port or 80}"


def _loopback_host(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in ("127.0.0.1", "localhost", "[::1]")


def token_middleware(token: str) -> Middleware:
    """An aiohttp middleware that lets through only requests carrying ``token``."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not _loopback_host(request.host):
            raise web.HTTPForbidden(
                text=f"host {request.host!r}: the console answers on 127.0.0.1 only\n"
            )
        given = request.query.get(TOKEN_PARAMETER)
        name = cookie_name(request.url.port)
        if given is not None and hmac.compare_digest(given, token):
            response = await handler(request)
            response.set_cookie(name, token, httponly=True, samesite="Strict", path="/")
            return response
        cookie = request.cookies.get(name)
        if cookie is not None and hmac.compare_digest(cookie, token):
            return await handler(request)
        reason = "wrong token" if given is not None else "no token"
        raise web.HTTPForbidden(
            text=f"{reason}: open the URL that `setpoint console` printed (it ends in ?token=...)\n"
        )

    return check
