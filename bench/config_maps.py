"""The objects every benchmark writes: ConfigMaps of a fixed, realistic size.

About 1 KiB of JSON each once the server has added uid, resourceVersion and timestamps: the
size of a typical small ConfigMap, and the size the project's memory aims are stated for.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

#: Payload characters per ConfigMap; with metadata the stored object is about 1 KiB of JSON.
PAYLOAD_CHARS: Final = 700

_encode = msgspec.json.Encoder().encode


def config_map(name: str, namespace: str, index: int) -> dict[str, Any]:
    """ConfigMap ``namespace/name`` whose payload is derived from ``index``."""
    payload = (f"{index:08d}" * (PAYLOAD_CHARS // 8 + 1))[:PAYLOAD_CHARS]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": f"app-{index % 50}", "tier": "backend"},
        },
        "data": {"payload": payload},
    }


def config_map_body(name: str, namespace: str, index: int) -> bytes:
    """The JSON request body that creates :func:`config_map`."""
    return _encode(config_map(name, namespace, index))


def namespace_body(name: str) -> bytes:
    """The JSON request body that creates namespace ``name``."""
    return _encode({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
