"""The kubeconfig a run gets: the proxy's address, and the CR the run is for as its user.

As in Operator SDK, the user name is the CR's owner reference (``apiVersion``, ``kind``,
``name``, ``uid``) plus its namespace, as JSON in URL-safe base64; the ``kubernetes`` client
sends it as basic authentication, which tells the proxy whom to make the owner of what the run
creates. The password is unused. The proxy never forwards these credentials.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Owner", "decode_owner", "encode_owner", "write_kubeconfig"]


@dataclass(frozen=True)
class Owner:
    """The CR a run is for."""

    api_version: str
    kind: str
    name: str
    uid: str
    namespace: str = ""

    @property
    def group(self) -> str:
        """The API group (``""`` for the core group)."""
        return self.api_version.rpartition("/")[0]

    @property
    def group_kind(self) -> str:
        """``Kind.group`` (``Kind`` for the core group), as in the type annotation."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    def reference(self) -> dict[str, Any]:
        """The ``ownerReference`` Operator SDK adds (no ``controller`` flag)."""
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
        }


def encode_owner(owner: Owner) -> str:
    """The kubeconfig user name that stands for ``owner``."""
    document = {**owner.reference(), "Namespace": owner.namespace}
    return base64.urlsafe_b64encode(json.dumps(document).encode()).decode()


def decode_owner(user: str) -> Owner | None:
    """The owner a user name stands for, or None when it is not one."""
    padded = user + "=" * (-len(user) % 4)
    try:
        document = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        try:
            document = json.loads(base64.b64decode(padded.encode()))
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return None
    if not isinstance(document, dict):
        return None
    fields = [document.get(key) for key in ("apiVersion", "kind", "name", "uid")]
    if not all(isinstance(value, str) and value for value in fields):
        return None
    api_version, kind, name, uid = (str(value) for value in fields)
    namespace = document.get("Namespace") or ""
    return Owner(api_version, kind, name, uid, namespace if isinstance(namespace, str) else "")


def write_kubeconfig(owner: Owner, proxy_url: str, path: Path) -> Path:
    """Write the kubeconfig of a run to ``path`` (mode 0600); returns ``path``."""
    user = encode_owner(owner)
    context = f"{owner.namespace}/proxy-server"
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "proxy-server", "cluster": {"server": proxy_url}}],
        "users": [{"name": "admin/proxy-server", "user": {"username": user, "password": "unused"}}],
        "contexts": [
            {
                "name": context,
                "context": {
                    "cluster": "proxy-server",
                    "user": "admin/proxy-server",
                    "namespace": owner.namespace or "default",
                },
            }
        ],
        "current-context": context,
    }
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        yaml.safe_dump(document, file)
    return path
