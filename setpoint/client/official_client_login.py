"""Optional login through the official Python clients' kubeconfig loaders ("piggybacking").

setpoint implements the common auth methods itself. For anything else (legacy ``auth-provider``
plugins such as OIDC refresh or cloud providers), if ``kubernetes_asyncio`` or ``kubernetes`` is
installed, their loader logs in and we take over the result: server, CA, client certificate and
a bearer token that is refreshed through the loader's own hook. Neither package is a dependency.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import Any, TypeVar

from setpoint.client.credentials import AuthInfo, BasicAuth, CredentialSource
from setpoint.client.errors import ConfigError

Config = TypeVar("Config")

__all__ = ["OfficialClientToken", "load_via_official_client"]

# Names under which the loaders store the token: "BearerToken" (kubernetes >= 35), else
# "authorization" (older releases and kubernetes_asyncio).
_TOKEN_KEYS = ("BearerToken", "authorization")


def _token_of(configuration: Any) -> str | None:
    hook = getattr(configuration, "refresh_api_key_hook", None)
    if hook is not None:
        hook(configuration)  # re-runs the provider when its token expired
    api_key = getattr(configuration, "api_key", None) or {}
    prefixes = getattr(configuration, "api_key_prefix", None) or {}
    for key in _TOKEN_KEYS:
        value = api_key.get(key)
        if value:
            prefix = prefixes.get(key)
            return f"{prefix} {value}" if prefix else str(value)
    return None


class OfficialClientToken:
    """The bearer token held by an official client ``Configuration``, refreshed by its hook."""

    def __init__(self, configuration: Any) -> None:
        self._configuration = configuration

    async def get(self) -> AuthInfo:
        """The current token; the refresh hook may run a provider, so it runs in a thread."""
        value = await asyncio.to_thread(_token_of, self._configuration)
        if value and not value.lower().startswith(("bearer ", "basic ")):
            value = f"Bearer {value}"
        return AuthInfo(authorization=value)

    def invalidate(self, used: AuthInfo | None = None) -> bool:
        """The hook decides on refresh itself; retrying once after a 401 may help."""
        return getattr(self._configuration, "refresh_api_key_hook", None) is not None


async def _load_configuration(path: str | None, context: str | None) -> Any:
    try:
        aio_client = importlib.import_module("kubernetes_asyncio.client")
        aio_config = importlib.import_module("kubernetes_asyncio.config")
    except ImportError:
        pass
    else:
        configuration = aio_client.Configuration()
        await aio_config.load_kube_config(
            config_file=path, context=context, client_configuration=configuration
        )
        return configuration
    try:
        sync_client = importlib.import_module("kubernetes.client")
        sync_config = importlib.import_module("kubernetes.config")
    except ImportError:
        raise ConfigError(
            "ClientConfig.from_official_client() needs the 'kubernetes' or "
            "'kubernetes_asyncio' package; install one of them"
        ) from None
    configuration = sync_client.Configuration()
    # The sync loader may run auth providers and exec plugins: keep it off the event loop.
    await asyncio.to_thread(
        sync_config.load_kube_config,
        config_file=path,
        context=context,
        client_configuration=configuration,
    )
    return configuration


async def load_via_official_client(
    path: str | None = None, *, context: str | None = None, build: Callable[..., Config]
) -> Config:
    """Log in with the official loader and convert its ``Configuration`` with ``build``
    (``ClientConfig``)."""
    try:
        configuration = await _load_configuration(path, context)
    except ConfigError:
        raise
    except Exception as exc:  # the loaders raise their own exception types
        raise ConfigError(f"the official client could not load the kubeconfig: {exc}") from exc
    credentials: CredentialSource | None = None
    if _token_of(configuration) is not None:
        credentials = OfficialClientToken(configuration)
    elif getattr(configuration, "username", None):
        credentials = BasicAuth(configuration.username, configuration.password or "")
    host = str(configuration.host)
    return build(
        server=host,
        credentials=credentials,
        ca_file=getattr(configuration, "ssl_ca_cert", None) or None,
        insecure_skip_tls_verify=not getattr(configuration, "verify_ssl", True),
        tls_server_name=getattr(configuration, "tls_server_name", None) or None,
        proxy_url=getattr(configuration, "proxy", None) or None,
        client_cert_file=getattr(configuration, "cert_file", None) or None,
        client_key_file=getattr(configuration, "key_file", None) or None,
        context=context,
    )
