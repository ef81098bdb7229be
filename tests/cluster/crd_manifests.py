"""CRD manifests the local cluster's tests install."""

from __future__ import annotations

import secrets
from typing import Any


def widget_crd(group: str | None = None) -> dict[str, Any]:
    """A namespaced ``Widget`` CRD with a status subresource and a typed spec.

    Each call uses a fresh group unless one is given, so tests never share CRDs.
    """
    group = group or f"w{secrets.token_hex(4)}.example.com"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "shortNames": ["wd"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "required": ["size"],
                                    "properties": {
                                        "size": {"type": "integer", "minimum": 0},
                                        "color": {"type": "string", "default": "blue"},
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {"ready": {"type": "boolean"}},
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def widget(name: str, group: str, size: Any = 1) -> dict[str, Any]:
    """A Widget custom resource."""
    return {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": size},
    }
