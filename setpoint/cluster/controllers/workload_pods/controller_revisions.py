"""ControllerRevisions: a StatefulSet's or DaemonSet's pod templates, numbered in order.

Upstream (``pkg/controller/history``) stores each template as a patch that replaces
``spec.template`` and names the revision ``<owner>-<hash of that patch>``; a template seen
before keeps its revision object. ``kubectl rollout history`` lists them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from setpoint.api.owners import controller_reference
from setpoint.cluster.controllers.workload_context import WorkloadContext, WriteError
from setpoint.cluster.controllers.workload_pods.adoption import adopt_if_orphan
from setpoint.cluster.controllers.workload_pods.ownership import controller_uid
from setpoint.cluster.controllers.workload_pods.template_hash import compute_hash

__all__ = ["REVISIONS", "REVISION_LABEL", "current_revision"]

REVISIONS = "apps/controllerrevisions"
REVISION_LABEL = "controller-revision-hash"


@dataclass(frozen=True)
class Revision:
    """The current revision: its name, the pods' label value, its number, the collision count."""

    name: str
    label: str
    number: int
    collision_count: int


_MAX_COLLISIONS = 10


async def current_revision(
    context: WorkloadContext, owner: Mapping[str, Any], *, label_is_name: bool
) -> Revision:
    """The revision of ``owner``'s current template, created when missing.

    StatefulSets label pods with the revision's name (``label_is_name``), DaemonSets with the
    hash alone. A name taken by another owner's revision is a hash collision: the next
    collision count gives another name (the caller records it in ``status.collisionCount``).
    """
    meta = owner.get("metadata") or {}
    namespace = str(meta.get("namespace"))
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    data = {"spec": {"template": {**template, "$patch": "replace"}}}
    collisions = int((owner.get("status") or {}).get("collisionCount") or 0)
    owned = []
    for candidate in context.list(REVISIONS, namespace):
        # Orphaned revisions (the owner was deleted with --cascade=orphan) are adopted back.
        revision_owned = await adopt_if_orphan(context, REVISIONS, owner, candidate)
        if revision_owned is not None:
            owned.append(revision_owned)
    number = max((int(r.get("revision") or 0) for r in owned), default=0) + 1
    selector = ((owner.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    for _ in range(_MAX_COLLISIONS):
        hash_value = compute_hash(data, collisions)
        name = f"{meta.get('name')}-{hash_value}"
        label = name if label_is_name else hash_value
        existing = next((r for r in owned if (r.get("metadata") or {}).get("name") == name), None)
        if existing is not None:
            return Revision(name, label, int(existing.get("revision") or 0), collisions)
        revision = {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {**selector, REVISION_LABEL: label},
                "ownerReferences": [controller_reference(owner)],
            },
            "data": data,
            "revision": number,
        }
        try:
            await context.create(REVISIONS, revision)
        except WriteError as error:
            if error.reason != "AlreadyExists":
                raise
            taken = context.get(REVISIONS, namespace, name)
            if taken is not None and controller_uid(taken) == meta.get("uid"):
                return Revision(name, label, int(taken.get("revision") or 0), collisions)
            collisions += 1
            continue
        return Revision(name, label, number, collisions)
    raise WriteError(409, "AlreadyExists", f"too many revision name collisions for {name}")
