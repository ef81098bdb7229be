"""Writing the kubeconfig that points clients at the local cluster.

One cluster, one user and one context, each named ``setpoint``, with a bearer token (or, for
:func:`write_user_kubeconfig`, a client certificate and key). The server
is the HTTPS listener when there is one: kubectl sends a token only over TLS. The file is
written atomically (temporary file + rename) and readable by its owner only, so a client that
polls for it never reads half a file and other users cannot read the token.
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any, Final

import yaml

CONTEXT_NAME: Final = "setpoint"


def kubeconfig_document(
    server_url: str,
    token: str,
    certificate_authority_pem: bytes | None = None,
    *,
    client_certificate: tuple[bytes, bytes] | None = None,
) -> dict[str, Any]:
    """The kubeconfig as a dict (with the CA's PEM for an https server).

    With ``client_certificate`` (certificate PEM, key PEM) the user authenticates with it
    instead of ``token``.
    """
    user: dict[str, Any] = {"token": token}
    if client_certificate is not None:
        certificate_pem, key_pem = client_certificate
        user = {
            "client-certificate-data": base64.b64encode(certificate_pem).decode(),
            "client-key-data": base64.b64encode(key_pem).decode(),
        }
    cluster: dict[str, Any] = {"server": server_url}
    if certificate_authority_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(certificate_authority_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT_NAME, "cluster": cluster}],
        "users": [{"name": CONTEXT_NAME, "user": user}],
        "contexts": [
            {"name": CONTEXT_NAME, "context": {"cluster": CONTEXT_NAME, "user": CONTEXT_NAME}}
        ],
        "current-context": CONTEXT_NAME,
        "preferences": {},
    }


def write_kubeconfig(
    path: str | Path,
    server_url: str,
    token: str,
    certificate_authority_pem: bytes | None = None,
) -> Path:
    """Write the kubeconfig to ``path`` atomically with mode 0600; return the path."""
    return _write(path, kubeconfig_document(server_url, token, certificate_authority_pem))


def write_user_kubeconfig(
    path: str | Path,
    server_url: str,
    certificate_authority_pem: bytes,
    certificate_pem: bytes,
    key_pem: bytes,
) -> Path:
    """Write a kubeconfig whose user logs in with a client certificate (mode 0600)."""
    document = kubeconfig_document(
        server_url, "", certificate_authority_pem, client_certificate=(certificate_pem, key_pem)
    )
    return _write(path, document)


def _write(path: str | Path, document: dict[str, Any]) -> Path:
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(document, sort_keys=False)
    fd, temporary = tempfile.mkstemp(prefix=".kubeconfig-", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
