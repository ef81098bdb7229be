"""How a webhook is reached: its CA, client certificate and ``Authorization`` header.

Metacontroller's webhooks take four connection settings, each read from the cluster once, when
the controller is built (a rotated Secret is picked up when the controller object changes):

- ``caBundle`` (exactly one of ``inline``, ``secretRef``, ``configMapRef``; key ``ca.crt``):
  the CA that signs the hook server's certificate, instead of the system roots;
- ``clientTLS`` (``secretRef`` ``name``/``namespace``, ``certKey`` ``tls.crt``,
  ``privateKeyKey`` ``tls.key``): a client certificate for mutual TLS;
- ``authorization`` (``type``, default ``Bearer``; ``secretRef`` with ``key``): the header
  ``Authorization: <type> <secret value>`` (``Basic`` is refused: use ``basicAuth``);
- ``basicAuth`` (``secretRef``, ``usernameKey`` ``username``, ``passwordKey`` ``password``):
  ``Authorization: Basic base64(user:password)``; exclusive with ``authorization``.

When a webhook sets any of them, those are used and nothing else; otherwise the first of the
controller's ``spec.endpointConfigs`` whose ``host`` matches the webhook URL's host (with or
without the scheme's default port, case-insensitively) gives them. A ``service`` webhook is
matched by ``<name>.<namespace>:<port>``, the host Metacontroller calls.
"""

from __future__ import annotations

import base64
import binascii
import os
import ssl
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from setpoint.client.errors import NotFound

__all__ = ["Connection", "effective_url", "match_endpoint_config", "resolve_connection"]

_FIELDS = ("caBundle", "clientTLS", "authorization", "basicAuth")
_DEFAULT_PORTS = {"https": "443", "http": "80"}


@dataclass(frozen=True)
class Connection:
    """The resolved settings: an SSL context (None: the defaults) and the header value."""

    ssl_context: ssl.SSLContext | None = None
    authorization: str | None = None


def effective_url(webhook: Mapping[str, Any]) -> str | None:
    """The URL Metacontroller calls (``service`` as ``proto://name.namespace:port/path``)."""
    if webhook.get("url"):
        return str(webhook["url"])
    service = webhook.get("service")
    if not isinstance(service, Mapping) or not service.get("name"):
        return None
    return (
        f"{service.get('protocol') or 'http'}://{service['name']}.{service.get('namespace')}:"
        f"{service.get('port') or 80}{webhook.get('path') or ''}"
    )


def match_endpoint_config(
    url: str, endpoint_configs: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The first entry whose ``host`` is the URL's host, with or without its default port."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    hostname = parts.hostname or ""
    default_port = _DEFAULT_PORTS.get(parts.scheme)
    hosts = {parts.netloc.lower()}
    if port is None and default_port:
        hosts.add(f"{hostname}:{default_port}")
    if port is not None and str(port) == default_port:
        hosts.add(hostname)
    for config in endpoint_configs:
        if isinstance(config, Mapping) and str(config.get("host") or "").lower() in hosts:
            return config
    return None


async def resolve_connection(
    client: Any,
    webhook: Mapping[str, Any],
    endpoint_configs: Sequence[Mapping[str, Any]] = (),
) -> Connection:
    """The connection settings of ``webhook`` (see the module docs); ValueError naming the
    setting and the problem when one cannot be read."""
    source: Mapping[str, Any] | None = webhook
    if not any(webhook.get(name) for name in _FIELDS):
        url = effective_url(webhook)
        source = match_endpoint_config(url, endpoint_configs) if url else None
    if source is None:
        return Connection()
    authorization, basic = source.get("authorization"), source.get("basicAuth")
    if authorization and basic:
        raise ValueError("authorization and basicAuth are mutually exclusive")
    ca_pem = await _ca_bundle(client, source.get("caBundle"))
    client_cert = await _client_tls(client, source.get("clientTLS"))
    header = None
    if authorization:
        header = await _authorization(client, authorization)
    elif basic:
        header = await _basic_auth(client, basic)
    if ca_pem is None and client_cert is None:
        return Connection(None, header)
    try:
        context = ssl.create_default_context(cadata=ca_pem)
    except ssl.SSLError as error:
        raise ValueError(f"can't resolve caBundle: not a PEM certificate ({error})") from None
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if client_cert is not None:
        _load_client_certificate(context, *client_cert)
    return Connection(context, header)


async def _secret_data(client: Any, ref: Any, field_name: str) -> tuple[dict[str, str], str]:
    if not isinstance(ref, Mapping) or not ref.get("name") or not ref.get("namespace"):
        raise ValueError(f"{field_name}.secretRef: name and namespace are required")
    where = f"{ref['namespace']}/{ref['name']}"
    try:
        secret = await client.get("v1", "Secret", ref["name"], namespace=ref["namespace"])
    except NotFound:
        raise ValueError(f"can't get {field_name} secret {where}: not found") from None
    return dict(secret.get("data") or {}), where


def _value(data: Mapping[str, str], key: str, field_name: str, where: str) -> str:
    if key not in data:
        raise ValueError(f"{field_name} secret {where} does not contain key {key!r}")
    try:
        return base64.b64decode(data[key]).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError(f"{field_name} secret {where}: key {key!r} is not text") from None


async def _authorization(client: Any, spec: Mapping[str, Any]) -> str:
    scheme = str(spec.get("type") or "").strip()
    if scheme.lower() == "basic":
        raise ValueError(
            f"can't resolve authorization: type {scheme!r} is not supported; "
            "use the basicAuth field instead"
        )
    ref = spec.get("secretRef")
    data, where = await _secret_data(client, ref, "authorization")
    token = _value(data, str((ref or {}).get("key") or ""), "authorization", where)
    return f"{scheme or 'Bearer'} {token.strip()}"


async def _basic_auth(client: Any, spec: Mapping[str, Any]) -> str:
    data, where = await _secret_data(client, spec.get("secretRef"), "basicAuth")
    username = _value(data, str(spec.get("usernameKey") or "username"), "basicAuth", where)
    password = _value(data, str(spec.get("passwordKey") or "password"), "basicAuth", where)
    if ":" in username:
        raise ValueError("can't resolve basicAuth: the username must not contain ':'")
    pair = f"{username.strip()}:{password.strip()}".encode()
    return "Basic " + base64.b64encode(pair).decode()


async def _client_tls(client: Any, spec: Any) -> tuple[str, str] | None:
    if not spec:
        return None
    data, where = await _secret_data(client, spec.get("secretRef"), "clientTLS")
    cert = _value(data, str(spec.get("certKey") or "tls.crt"), "clientTLS", where)
    key = _value(data, str(spec.get("privateKeyKey") or "tls.key"), "clientTLS", where)
    return cert, key


def _load_client_certificate(context: ssl.SSLContext, cert: str, key: str) -> None:
    # The ssl module loads a certificate chain only from files: a private directory, removed
    # once loaded (the key stays in memory only).
    with tempfile.TemporaryDirectory(prefix="setpoint-client-tls-") as directory:
        cert_path = os.path.join(directory, "tls.crt")
        key_path = os.path.join(directory, "tls.key")
        for path, text in ((cert_path, cert), (key_path, key)):
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as file:
                file.write(text)
        try:
            context.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as error:
            raise ValueError(
                f"can't resolve clientTLS: not a certificate and key ({error})"
            ) from None


async def _ca_bundle(client: Any, bundle: Any) -> str | None:
    if not bundle:
        return None
    sources = [name for name in ("inline", "secretRef", "configMapRef") if bundle.get(name)]
    if not sources:
        raise ValueError(
            "can't resolve caBundle: none of inline, secretRef, or configMapRef is specified"
        )
    if len(sources) > 1:
        raise ValueError(
            "can't resolve caBundle: exactly one of inline, secretRef, or configMapRef "
            "must be specified"
        )
    if sources[0] == "inline":
        return str(bundle["inline"])
    kind = "Secret" if sources[0] == "secretRef" else "ConfigMap"
    ref = bundle[sources[0]]
    key = ref.get("key") or "ca.crt"
    where = f"{ref.get('namespace')}/{ref.get('name')}"
    try:
        obj = await client.get("v1", kind, ref.get("name"), namespace=ref.get("namespace"))
    except NotFound:
        raise ValueError(f"can't resolve caBundle: {kind} {where} not found") from None
    value = (obj.get("data") or {}).get(key)
    if not value:
        raise ValueError(f"can't resolve caBundle: key {key!r} not found in {kind} {where}")
    return base64.b64decode(value).decode() if kind == "Secret" else str(value)
