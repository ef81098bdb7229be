"""The Pod a controller creates from its template (``controller.GetPodFromTemplate``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from setpoint.api.owners import controller_reference

__all__ = ["pod_from_template"]


def pod_from_template(
    template: Mapping[str, Any],
    owner: Mapping[str, Any],
    *,
    name_prefix: str | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """A new Pod: the template's labels, annotations, finalizers and spec, owned by ``owner``.

    The name is ``name`` when given, else ``generateName: <owner>-`` (``name_prefix``
    overrides the prefix): the API server appends five random characters.
    """
    template_meta = template.get("metadata") or {}
    metadata: dict[str, Any] = {}
    if name is not None:
        metadata["name"] = name
    else:
        metadata["generateName"] = (
            name_prefix if name_prefix is not None else f"{owner['metadata']['name']}-"
        )
    namespace = (owner.get("metadata") or {}).get("namespace")
    if namespace:
        metadata["namespace"] = namespace
    for field in ("labels", "annotations"):
        if template_meta.get(field):
            metadata[field] = dict(template_meta[field])
    if template_meta.get("finalizers"):
        metadata["finalizers"] = list(template_meta["finalizers"])
    metadata["ownerReferences"] = [controller_reference(owner)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": copy.deepcopy(dict(template.get("spec") or {})),
    }
