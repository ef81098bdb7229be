"""Configuration from inside a pod: the service-account token, CA and namespace.

Mirrors client-go's ``rest.InClusterConfig``: the server is
``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``; the token file is re-read
periodically because kubelet rotates projected tokens.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from setpoint.client.credentials import TokenFile
from setpoint.client.errors import ConfigError
from setpoint.client.namespaces import DEFAULT_NAMESPACE

Config = TypeVar("Config")

__all__ = ["SERVICE_ACCOUNT_DIR", "load_in_cluster"]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def load_in_cluster(
    *,
    service_account_dir: str | os.PathLike[str] | None = None,
    environ: dict[str, str] | None = None,
    build: Callable[..., Config],
) -> Config:
    """The config of the pod environment, made by ``build`` (``ClientConfig``) from its fields;
    :class:`ConfigError` outside a pod."""
    env = os.environ if environ is None else environ
    host = env.get("KUBERNETES_SERVICE_HOST", "")
    port = env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ConfigError(
            "unable to load in-cluster configuration: KUBERNETES_SERVICE_HOST and "
            "KUBERNETES_SERVICE_PORT must be defined (is this running in a pod?)"
        )
    directory = Path(service_account_dir) if service_account_dir else SERVICE_ACCOUNT_DIR
    token_path = directory / "token"
    ca_path = directory / "ca.crt"
    if not token_path.is_file():
        raise ConfigError(f"unable to load in-cluster configuration: no token file {token_path}")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address must be bracketed in a URL
    namespace = DEFAULT_NAMESPACE
    namespace_path = directory / "namespace"
    if namespace_path.is_file():
        namespace = namespace_path.read_text(encoding="utf-8").strip() or DEFAULT_NAMESPACE
    credentials = TokenFile(token_path)
    return build(
        server=f"https://{host}:{port}",
        namespace=namespace,
        credentials=credentials,
        ca_file=str(ca_path) if ca_path.is_file() else None,
        context="in-cluster",
    )
