"""A webhook's ``clientConfig``, validated as upstream's ``apiserver/pkg/util/webhook`` does for
every kind that carries one: admission webhook configurations and CRD conversion webhooks.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError


def client_config_errors(path: str, config: Any) -> list[FieldError]:
    """A webhook ``clientConfig`` at ``path``: exactly one of ``url`` and ``service``, each
    valid (``ValidateWebhookURL`` with https forced, ``ValidateWebhookService``)."""
    if not isinstance(config, dict):
        return [fe.required(path, "exactly one of url or service is required")]
    url = config.get("url")
    service = config.get("service")
    if (url is None) == (service is None):
        return [fe.required(path, "exactly one of url or service is required")]
    if isinstance(url, str):
        return url_errors(f"{path}.url", url)
    errors: list[FieldError] = []
    if isinstance(service, dict):
        if not service.get("name"):
            errors.append(fe.required(f"{path}.service.name", "service name is required"))
        if not service.get("namespace"):
            errors.append(fe.required(f"{path}.service.namespace", "service namespace is required"))
        service_path = service.get("path")
        if isinstance(service_path, str) and service_path and not service_path.startswith("/"):
            errors.append(fe.invalid(f"{path}.service.path", service_path, "must start with a '/'"))
        port = service.get("port")
        if isinstance(port, int) and not 1 <= port <= 65535:
            errors.append(
                fe.invalid(
                    f"{path}.service.port",
                    port,
                    "port is not valid: must be between 1 and 65535, inclusive",
                )
            )
    return errors


def url_errors(path: str, url: str) -> list[FieldError]:
    """``webhook.ValidateWebhookURL`` (https forced): the same checks, the same words."""
    try:
        parts = urlsplit(url)
        if parts.port == 0:
            raise ValueError(f"invalid port {parts.port}")
    except ValueError as exc:
        return [fe.invalid(path, url, f"must be a valid URL: {exc}")]
    errors: list[FieldError] = []
    if parts.scheme != "https":
        errors.append(fe.invalid(path, parts.scheme, "'https' is the only allowed URL scheme"))
    if not parts.hostname:
        errors.append(fe.invalid(path, parts.netloc, "host must be specified"))
    if parts.username is not None or parts.password is not None:
        errors.append(
            fe.invalid(path, parts.username or "", "user information is not permitted in the URL")
        )
    if parts.fragment:
        errors.append(fe.invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errors.append(
            fe.invalid(path, parts.query, "query parameters are not permitted in the URL")
        )
    return errors
