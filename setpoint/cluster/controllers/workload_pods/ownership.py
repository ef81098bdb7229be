"""The controller uid of an object, read without validation (hot loops over every pod)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CONTROLLER_INDEX", "NODE_INDEX", "controller_index", "controller_uid", "node_index"]

#: The name of the informers' index of objects by their controller (:func:`controller_index`).
CONTROLLER_INDEX = "controller"
#: The name of the pod informer's index of pods by the node they are bound to.
NODE_INDEX = "node"


def controller_index(obj: Mapping[str, Any]) -> tuple[str]:
    """The value an object is indexed under by its controller: ``namespace/uid``, or
    ``namespace/`` for an object without one (an orphan a controller may adopt)."""
    namespace = (obj.get("metadata") or {}).get("namespace") or ""
    return (f"{namespace}/{controller_uid(obj) or ''}",)


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """The uid in the ``controller: true`` ownerReference, or None."""
    for reference in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if reference.get("controller") is True:
            uid = reference.get("uid")
            return str(uid) if uid is not None else None
    return None


def node_index(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """The value a pod is indexed under by its node: its ``spec.nodeName`` (none if unbound)."""
    name = (pod.get("spec") or {}).get("nodeName")
    return (str(name),) if name else ()
