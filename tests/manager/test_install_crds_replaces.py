"""``setpoint.testing.install_crds``: a test gets the CRD it asked for, even when another test
of the session installed a different version of it."""

from __future__ import annotations

from typing import Any

import pytest

from setpoint.client import Client, Invalid
from setpoint.testing import install_crds

GROUP = "replace.testing.setpoint.dev"


def crd(min_length: int) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "label": {"type": "string", "minLength": min_length}
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


async def test_installing_again_with_another_schema_replaces_it(
    client: Client, namespace: str
) -> None:
    gadget = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": namespace},
        "spec": {"label": ""},
    }
    await install_crds(client, crd(min_length=1))
    with pytest.raises(Invalid, match=r"spec\.label"):
        await client.create(gadget)
    await install_crds(client, crd(min_length=0))
    created = await client.create(gadget)
    assert created["spec"] == {"label": ""}
