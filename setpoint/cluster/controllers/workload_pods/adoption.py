"""Adoption: a controller takes an orphan that its selector matches (``ControllerRefManager``).

A Deployment re-created after ``kubectl delete --cascade=orphan`` takes its ReplicaSets back;
a StatefulSet or DaemonSet takes its pods back instead of colliding with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from setpoint.api.owners import controller_reference
from setpoint.api.selectors import LabelSelector
from setpoint.cluster.controllers.workload_context import WorkloadContext, WriteError
from setpoint.cluster.controllers.workload_pods.ownership import controller_uid

__all__ = ["adopt_if_orphan"]


async def adopt_if_orphan(
    context: WorkloadContext, resource: str, owner: Mapping[str, Any], obj: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """``obj`` once owned by ``owner``: as it is when already so, adopted when it is a
    matching orphan, None when it belongs to someone else or does not match."""
    owner_meta = owner.get("metadata") or {}
    meta = obj.get("metadata") or {}
    current = controller_uid(obj)
    if current is not None:
        return obj if current == owner_meta.get("uid") else None
    if meta.get("deletionTimestamp") or owner_meta.get("deletionTimestamp"):
        return None
    try:
        selector = LabelSelector.from_dict((owner.get("spec") or {}).get("selector"))
    except ValueError:
        return None
    if selector.empty or not selector.matches(meta.get("labels") or {}):
        return None
    references = [*(meta.get("ownerReferences") or ()), controller_reference(owner)]
    try:
        return await context.patch(
            resource,
            str(meta.get("namespace")),
            str(meta.get("name")),
            {"metadata": {"ownerReferences": references}},
        )
    except WriteError:
        return None
