"""Reconciles PodSets: as many live Pods as ``spec.replicas``, their names in ``status``.

Level-based and ReplicaSet-like: read the Pods the PodSet controls from the cache (reads made
through ``ctx`` wait for the cache to have seen this operator's own creations and deletions, so
a burst of events never makes it create or delete twice), leave out Pods that are terminating or
finished, create the missing ones, delete the excess, and report what is left.
"""

from __future__ import annotations

from typing import Any, Final

import setpoint
from podset_operator.api.v1alpha1.podset import PodSet
from podset_operator.operator import op
from setpoint import kinds
from setpoint.api.rbac import Permission
from setpoint.controller import set_controller_reference

#: Pod phases that count as a live replica (the workshop's rule).
LIVE_PHASES = ("Pending", "Running")
#: Phases of Pods that are done and will not run again (restartPolicy Always aside).
FINISHED_PHASES = ("Succeeded", "Failed")


def new_pod(podset: PodSet) -> dict[str, Any]:
    """A busybox Pod sleeping for an hour, labelled with the PodSet's name."""
    name = podset.metadata.name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{name}-pod",
            "namespace": podset.metadata.namespace,
            "labels": {"app": name},
        },
        "spec": {
            "restartPolicy": "Always",
            "containers": [{"name": "busybox", "image": "busybox", "command": ["sleep", "3600"]}],
        },
    }


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


GROUP: Final = "app.example.com"
#: Exactly what this reconciler does (the PodSet's least privilege), instead of all that
#: `for_` and `owns` could imply.
PERMISSIONS: Final = [
    Permission(GROUP, "podsets", ["get", "list", "watch"]),
    Permission(GROUP, "podsets/status", ["get", "update", "patch"]),
    # The Pods' owner references block the PodSet's deletion (blockOwnerDeletion), which the
    # OwnerReferencesPermissionEnforcement admission plugin allows only to this.
    Permission(GROUP, "podsets/finalizers", ["update"]),
    Permission("", "pods", ["get", "list", "watch", "create", "delete"]),
]


@op.reconciler(for_=PodSet, owns=[kinds.Pod], infer_permissions=False, permissions=PERMISSIONS)
async def reconcile_podset(ctx: setpoint.Context, request: setpoint.Request) -> None:
    podset: PodSet | None = await ctx.get()
    if podset is None:
        return  # deleted: the garbage collector deletes its Pods
    pods = await ctx.owned(kinds.Pod)
    current = [pod for pod in pods if not pod["metadata"].get("deletionTimestamp")]
    for pod in current:
        if _phase(pod) in FINISHED_PHASES:
            await ctx.client.delete(pod, missing_ok=True)
    live = sorted(
        (pod for pod in current if _phase(pod) in LIVE_PHASES),
        key=lambda pod: str(pod["metadata"]["name"]),
    )
    wanted = podset.spec.replicas
    for _ in range(wanted - len(live)):
        pod = new_pod(podset)
        set_controller_reference(podset, pod)
        await ctx.client.create(pod)
    excess = live[wanted:] if len(live) > wanted else []
    for pod in excess:
        await ctx.client.delete(pod, missing_ok=True)
    kept = [pod["metadata"]["name"] for pod in live[: len(live) - len(excess)]]
    await ctx.patch_status({"podNames": kept, "availableReplicas": len(kept)})
