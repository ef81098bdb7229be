"""Fixtures of the patch and apply tests: a CRD with list types, and apply requests."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.cluster.raw_api import RawAPI, Reply

APPLY = "application/apply-patch+yaml"
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def gadget_crd(group: str) -> dict[str, Any]:
    """A ``Gadget`` CRD whose spec has a map list (by name), a set, an atomic list and an
    atomic map, and a status subresource."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
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
                                    "properties": {
                                        "size": {"type": "integer"},
                                        "color": {"type": "string"},
                                        "parts": {
                                            "type": "array",
                                            "x-kubernetes-list-type": "map",
                                            "x-kubernetes-list-map-keys": ["name"],
                                            "items": {
                                                "type": "object",
                                                "required": ["name"],
                                                "properties": {
                                                    "name": {"type": "string"},
                                                    "count": {"type": "integer"},
                                                },
                                            },
                                        },
                                        "tags": {
                                            "type": "array",
                                            "x-kubernetes-list-type": "set",
                                            "items": {"type": "string"},
                                        },
                                        "args": {"type": "array", "items": {"type": "string"}},
                                        "selector": {
                                            "type": "object",
                                            "x-kubernetes-map-type": "atomic",
                                            "additionalProperties": {"type": "string"},
                                        },
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {"phase": {"type": "string"}},
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


class Gadgets:
    """Requests on the Gadgets of one group in one namespace."""

    def __init__(self, api: RawAPI, group: str, namespace: str) -> None:
        self.api = api
        self.group = group
        self.namespace = namespace
        self.api_version = f"{group}/v1"

    def path(self, name: str = "", subresource: str = "") -> str:
        base = f"/apis/{self.group}/v1/namespaces/{self.namespace}/gadgets"
        if name:
            base += f"/{name}"
        if subresource:
            base += f"/{subresource}"
        return base

    def manifest(self, name: str, **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": "Gadget",
            "metadata": {"name": name},
            "spec": spec,
        }

    async def apply(
        self, obj: dict[str, Any], manager: str, *, force: bool = False, subresource: str = ""
    ) -> Reply:
        name = obj["metadata"]["name"]
        query = f"?fieldManager={manager}" + ("&force=true" if force else "")
        return await self.api.request(
            "PATCH",
            self.path(name, subresource) + query,
            data=json.dumps(obj).encode(),
            content_type=APPLY,
        )


@pytest.fixture
async def gadgets(api: RawAPI, namespace: str) -> AsyncIterator[Gadgets]:
    """A fresh Gadget CRD (unique group), removed after the test."""
    group = f"g{secrets.token_hex(4)}.example.com"
    crd = gadget_crd(group)
    reply = await api.request("POST", CRDS, crd)
    assert reply.status == 201, reply.body
    try:
        yield Gadgets(api, group, namespace)
    finally:
        await api.request("DELETE", f"{CRDS}/{crd['metadata']['name']}")


def managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """managedFields by (manager, operation) → fieldsV1."""
    return {
        (entry["manager"], entry["operation"]): entry["fieldsV1"]
        for entry in obj["metadata"].get("managedFields", [])
    }
