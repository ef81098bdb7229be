"""Reconciles TDSets: Deployment ``<name>`` at the current hour's replica count.

Each run computes the replica count for now, creates the Deployment or sets its replicas (so a
manual scale is reverted and a deleted Deployment comes back, through ``owns``), reports the
Deployment's availability in conditions, and asks to run again at the next range boundary
(``requeue_at``) rather than polling.
"""

from __future__ import annotations

from typing import Any, Final

import setpoint
from setpoint import kinds
from setpoint.api.rbac import Permission
from tdset_operator.api.v1.tdset import TDSet
from tdset_operator.operator import op
from tdset_operator.schedule import (
    InvalidTimeZone,
    desired_replicas,
    matching_range,
    next_boundary,
    time_zone,
)

#: The original's pod labels (and Deployment selector), kept so its dashboards still match.
PART_OF: Final = "tdset-operator"


def labels_for(tdset: TDSet) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": "TDSet",
        "app.kubernetes.io/instance": str(tdset.metadata.name),
        "app.kubernetes.io/version": "v1",
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/created-by": "controller-manager",
    }


def deployment_spec(tdset: TDSet, replicas: int) -> dict[str, Any]:
    """The Deployment's spec when it is created; afterwards only ``replicas`` is kept in line."""
    labels = labels_for(tdset)
    container = {
        "name": tdset.metadata.name,
        "image": tdset.spec.container.image,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "tdset", "containerPort": tdset.spec.container.port}],
    }
    return {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
    }


GROUP: Final = "schedule.rs"
#: Exactly what this reconciler does, instead of all that `for_` and `owns` could imply.
PERMISSIONS: Final = [
    Permission(GROUP, "tdsets", ["get", "list", "watch"]),
    Permission(GROUP, "tdsets/status", ["get", "update", "patch"]),
    # The Deployment's owner reference blocks the TDSet's deletion (blockOwnerDeletion), which
    # clusters running the OwnerReferencesPermissionEnforcement admission plugin allow only to
    # this.
    Permission(GROUP, "tdsets/finalizers", ["update"]),
    Permission("apps", "deployments", ["get", "list", "watch", "create", "update"]),
]


@op.reconciler(
    for_=TDSet, owns=[kinds.Deployment], infer_permissions=False, permissions=PERMISSIONS
)
async def reconcile_tdset(
    ctx: setpoint.Context, request: setpoint.Request
) -> setpoint.Result | None:
    tdset: TDSet | None = await ctx.get()
    if tdset is None:
        return None  # deleted: the garbage collector deletes its Deployment
    spec = tdset.spec
    try:
        zone = time_zone(spec.time_zone)
    except InvalidTimeZone as error:
        # Reported once, not retried: editing the spec wakes the reconcile again (the run that
        # the status write's own event wakes finds it reported and records nothing).
        before = tdset.status.conditions if tdset.status is not None else []
        reported = await ctx.patch_status(conditions=[
            {"type": "Degraded", "status": "True", "reason": "InvalidTimeZone",
             "message": str(error)},
        ])  # fmt: skip
        if reported.status is None or reported.status.conditions != before:
            ctx.recorder.warning(tdset, "InvalidTimeZone", str(error))
        return None

    now = ctx.now()
    hour = now.astimezone(zone).hour
    replicas = desired_replicas(spec.scheduling_config, spec.default_replica, hour)
    index = matching_range(spec.scheduling_config, hour)
    why = "the default" if index is None else f"schedulingConfig[{index}]"

    def mutate(deployment: dict[str, Any]) -> None:
        if deployment.get("spec"):
            deployment["spec"]["replicas"] = replicas  # as the original: replicas only
        else:
            deployment["spec"] = deployment_spec(tdset, replicas)

    skeleton = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": request.name}}
    outcome, deployment = await ctx.create_or_update(skeleton, mutate)
    if outcome == "created":
        ctx.recorder.normal(tdset, "Created", f"created Deployment {request.name}")
    elif outcome == "updated":
        ctx.recorder.normal(tdset, "Scaled", f"scaled Deployment {request.name} to {replicas}")

    available = int((deployment.get("status") or {}).get("availableReplicas") or 0)
    settled = _settled(deployment) and available == replicas
    counts = f"{available} of {replicas} replicas available ({why} at {hour:02d}:00)"
    await ctx.patch_status(
        {"desiredReplicas": replicas, "availableReplicas": available},
        conditions=[
            {"type": "Available", "status": "True" if settled else "False",
             "reason": "DeploymentAvailable" if settled else "DeploymentNotAvailable",
             "message": counts},
            {"type": "Progressing", "status": "False" if settled else "True",
             "reason": "Complete" if settled else "ScalingDeployment", "message": counts},
            {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": ""},
        ],
    )  # fmt: skip
    boundary = next_boundary(spec.scheduling_config, now, zone)
    return None if boundary is None else setpoint.Result(requeue_at=boundary)


def _settled(deployment: dict[str, Any]) -> bool:
    """Whether the Deployment controller has seen the latest spec (its status is current)."""
    generation = (deployment.get("metadata") or {}).get("generation") or 0
    observed = (deployment.get("status") or {}).get("observedGeneration") or 0
    return bool(observed >= generation)
