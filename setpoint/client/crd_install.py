"""Installing a CustomResourceDefinition from its manifest: create it, or replace the one of
that name (`setpoint install` and the testing kit's ``install_crds`` both need exactly this)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from setpoint.client.client import Client
from setpoint.client.conflicts import retry_on_conflict
from setpoint.client.errors import AlreadyExists

__all__ = ["create_or_replace_crd"]

CRD_API_VERSION = "apiextensions.k8s.io/v1"


async def create_or_replace_crd(
    client: Client, manifest: Mapping[str, Any]
) -> Literal["created", "configured"]:
    """Create the CRD ``manifest`` describes, or make the existing one of that name say what
    the manifest says (spec, labels, annotations; retried when another writer got there
    first)."""
    try:
        await client.create(dict(manifest))
        return "created"
    except AlreadyExists:
        pass
    name = manifest["metadata"]["name"]

    async def replace() -> None:
        current = await client.get(CRD_API_VERSION, "CustomResourceDefinition", name)
        metadata = {
            **current["metadata"],
            "labels": manifest["metadata"].get("labels") or {},
            "annotations": manifest["metadata"].get("annotations") or {},
        }
        await client.update({**current, "metadata": metadata, "spec": manifest["spec"]})

    await retry_on_conflict(replace)
    return "configured"
