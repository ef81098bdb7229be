"""Waiting for an API server that is not up yet.

An operator often starts before its API server answers: the control plane restarts, a kind or
local cluster is still booting, the network is not there yet. controller-runtime then waits for
its caches to sync (2 minutes by default) before giving up; `wait_for_api_server` does the same
for the first request, with exponential backoff and one log line per failed attempt, and gives up
with :class:`ApiServerUnreachable` (one line naming the server) once the deadline passes.

Only failures that time can cure are waited on: no connection (refused, reset, timed out, host
unknown) and 429/5xx answers. A TLS or credentials error fails at once: waiting would not fix it.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import random
import socket
import ssl
from typing import Final
from urllib.parse import urlsplit

from setpoint.client.client import Client
from setpoint.client.errors import ApiError, ConnectionFailed
from setpoint.client.retry_policy import RetryPolicy

__all__ = [
    "ApiServerUnreachable",
    "cause_chain",
    "connection_reason",
    "wait_for_api_server",
]

log = logging.getLogger("setpoint.manager")

#: First wait between attempts; doubled each time up to MAX_DELAY_S (with jitter).
INITIAL_DELAY_S: Final = 0.5
#: Longest wait between two attempts: a server that comes up is noticed within this.
MAX_DELAY_S: Final = 10.0
#: After this many refused (or unanswered) attempts each waiting line names the likely cause.
HINT_AFTER_ATTEMPTS: Final = 3
#: The likely cause when nothing listens: the line a user sees while `setpoint run` waits.
NOT_RUNNING_HINT: Final = (
    "is the cluster running? (`setpoint cluster serve` starts a local one; "
    "--kubeconfig/--context choose another)"
)
_NOBODY_THERE: Final = frozenset(
    {"connection refused", "host name not found", "host unreachable", "timed out", "no answer"}
)
#: One attempt is one request: the loop here does the retrying, and logs each attempt.
_SINGLE_ATTEMPT: Final = RetryPolicy(max_retries=0)


class ApiServerUnreachable(ConnectionFailed):
    """The API server did not answer within the wait; ``waited`` seconds, ``attempts`` tries."""

    def __init__(self, *, url: str, reason: str, waited: float, attempts: int) -> None:
        super().__init__(
            f"the API server at {url} ({reason}) did not answer after waiting {waited:.0f}s "
            f"({attempts} attempts)",
            method="GET",
            url=url,
        )
        self.reason = reason
        self.waited = waited
        self.attempts = attempts


def _server_of(client: Client) -> str:
    parts = urlsplit(client.config.server)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else client.config.server


def cause_chain(error: BaseException) -> list[BaseException]:
    """``error`` and the exceptions it was raised from or during, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def connection_reason(error: BaseException) -> str:
    """Why a connection to the API server failed, in a few words ("connection refused")."""
    for cause in cause_chain(error):
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, ConnectionResetError):
            return "connection reset"
        if isinstance(cause, ssl.SSLError | ssl.CertificateError):
            return f"TLS error: {getattr(cause, 'reason', None) or cause}"
        if isinstance(cause, TimeoutError):
            return "timed out"
        if isinstance(cause, OSError) and cause.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return "host unreachable"
        text = str(cause)
        if isinstance(cause, socket.gaierror) or any(
            marker in text for marker in ("Name or service not known", "nodename nor servname")
        ):
            return "host name not found"
    return "no answer"


def _tls_problem(error: BaseException) -> bool:
    return any(
        isinstance(cause, ssl.SSLError | ssl.CertificateError)
        or "SSL" in type(cause).__name__
        or "Certificate" in type(cause).__name__
        for cause in cause_chain(error)
    )


def _waitable(error: Exception) -> bool:
    if isinstance(error, ApiError):
        return error.code == 429 or error.code >= 500
    # A TLS or certificate problem is a configuration error, not a server still starting.
    return isinstance(error, ConnectionFailed) and not _tls_problem(error)


def _reason(error: Exception) -> str:
    if isinstance(error, ApiError):
        return f"HTTP {error.code} {error.reason}".strip()
    return connection_reason(error)


async def wait_for_api_server(client: Client, timeout: float) -> None:  # noqa: ASYNC109
    """Return once ``GET /version`` succeeds; retry with backoff for up to ``timeout`` seconds.

    Logs one warning per failed attempt. Raises :class:`ApiServerUnreachable` when the time is
    up, or the first error that waiting cannot cure (TLS, 401, 403, ...).
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    deadline = started + timeout
    server = _server_of(client)
    delay = INITIAL_DELAY_S
    attempts = 0
    while True:
        attempts += 1
        try:
            await client.transport.request("GET", "/version", retry=_SINGLE_ATTEMPT)
        except (ApiError, ConnectionFailed) as error:
            if not _waitable(error):
                raise
            remaining = deadline - loop.time()
            if remaining <= 0:
                waited = loop.time() - started
                raise ApiServerUnreachable(
                    url=server,
                    reason=_reason(error),
                    waited=waited,
                    attempts=attempts,
                ) from error
            wait = min(remaining, delay * (1.0 + 0.5 * random.random()))
            reason = _reason(error)
            hint = ""
            if attempts >= HINT_AFTER_ATTEMPTS and reason in _NOBODY_THERE:
                hint = f": {NOT_RUNNING_HINT}"
            log.warning(
                "waiting for the API server at %s (%s); attempt %d, next in %.1fs%s",
                server,
                reason,
                attempts,
                wait,
                hint,
            )
            await asyncio.sleep(wait)
            delay = min(MAX_DELAY_S, delay * 2)
            continue
        if attempts > 1:
            log.info(
                "the API server at %s answers after %.1fs (%d attempts)",
                server,
                loop.time() - started,
                attempts,
            )
        return
