"""Where the client's identity comes from: static tokens, token files, basic auth, exec plugins.

A :class:`CredentialSource` is asked for an :class:`AuthInfo` before every request; it may cache.
When the server answers 401 the transport calls ``invalidate()`` and, if that returns True,
retries once with fresh credentials (a rotated token file, a re-run exec plugin).
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from setpoint.client.errors import ConfigError

__all__ = [
    "AuthInfo",
    "BasicAuth",
    "CredentialSource",
    "StaticToken",
    "TokenFile",
    "fixed_credentials",
]

# client-go re-reads a service-account token file at most once a minute (transport/token_source.go);
# kubelet rotates projected tokens well before they expire, so a minute is always fresh enough.
DEFAULT_TOKEN_FILE_REREAD_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class AuthInfo:
    """What to attach to one request: an ``Authorization`` header and/or a client certificate.

    ``client_cert_pem`` / ``client_key_pem`` are only set by sources that produce certificates
    at run time (exec plugins); static certificates live in ``ClientConfig``.
    """

    authorization: str | None = None
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None


@runtime_checkable
class CredentialSource(Protocol):
    """Produces credentials for requests; may refresh them on demand."""

    async def get(self) -> AuthInfo:
        """Credentials for the next request."""
        ...

    def invalidate(self, used: AuthInfo | None = None) -> bool:
        """Forget cached credentials after a 401; True if fetching again may give new ones.

        ``used`` is what the rejected request carried: if the source has already moved on to
        newer credentials (another request refreshed them), it keeps those.
        """
        ...


class StaticToken:
    """A bearer token fixed at configuration time."""

    def __init__(self, token: str) -> None:
        self._info = AuthInfo(authorization=f"Bearer {token}")

    async def get(self) -> AuthInfo:
        """The ``Bearer`` header for the token."""
        return self._info

    def invalidate(self, used: AuthInfo | None = None) -> bool:
        """A static token cannot change: never worth retrying."""
        return False


class BasicAuth:
    """HTTP basic authentication (kubeconfig ``username``/``password``)."""

    def __init__(self, username: str, password: str) -> None:
        raw = f"{username}:{password}".encode()
        self._info = AuthInfo(authorization="Basic " + base64.b64encode(raw).decode("ascii"))

    async def get(self) -> AuthInfo:
        """The ``Basic`` header."""
        return self._info

    def invalidate(self, used: AuthInfo | None = None) -> bool:
        """Fixed credentials: never worth retrying."""
        return False


def fixed_credentials(source: CredentialSource | None) -> AuthInfo | None:
    """What ``source.get()`` always answers, for the sources whose answer never changes (a
    static token, basic auth); None for any other, which must be asked before every request."""
    if type(source) is StaticToken or type(source) is BasicAuth:  # subclasses may override get()
        return source._info
    return None


class TokenFile:
    """A bearer token read from a file and re-read periodically (service-account tokens rotate).

    The file is read at most every ``reread_seconds``, and again at once after a 401. If a re-read
    fails the last good token is kept (the file may be mid-rotation).
    """

    def __init__(
        self, path: str | Path, *, reread_seconds: float = DEFAULT_TOKEN_FILE_REREAD_SECONDS
    ) -> None:
        self.path = Path(path)
        self.reread_seconds = reread_seconds
        self._token: str | None = None
        self._read_at = float("-inf")

    def _read(self) -> str:
        try:
            token = self.path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read token file {self.path}: {exc.strerror or exc}") from exc
        if not token:
            raise ConfigError(f"token file {self.path} is empty")
        return token

    async def get(self) -> AuthInfo:
        """The ``Bearer`` header for the file's current token."""
        now = time.monotonic()
        if self._token is None or now - self._read_at >= self.reread_seconds:
            try:
                self._token = self._read()
            except ConfigError:
                if self._token is None:
                    raise
            self._read_at = now
        return AuthInfo(authorization=f"Bearer {self._token}")

    def invalidate(self, used: AuthInfo | None = None) -> bool:
        """Force a re-read on the next request: the token may have been rotated."""
        current = f"Bearer {self._token}" if self._token else None
        if used is None or used.authorization == current:
            self._read_at = float("-inf")
        return True
