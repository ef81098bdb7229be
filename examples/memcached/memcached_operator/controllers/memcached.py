"""Reconciles Memcacheds: a Deployment of `size` memcached pods and a Service in front of them.

operator-sdk's v4 memcached controller, step for step where users can see it (conditions,
reasons, messages, the finalizer and its Warning event), with its known bugs fixed (see the
README): the selector names the Memcached, an image without a tag works, `Available` waits for the
Deployment's pods, and the whole Deployment is reconciled, not only its replicas, so that
`spec.version` rolls the pods one at a time.
"""

from __future__ import annotations

import os
import re
from typing import Any, Final

import setpoint
from memcached_operator.api.v1alpha1.memcached import Memcached
from memcached_operator.operator import op
from setpoint import kinds
from setpoint.api.rbac import Permission
from setpoint.client import ApiError
from setpoint.controller import ensure_finalizer, remove_finalizer

FINALIZER = "cache.example.com/finalizer"
#: Where the memcached image comes from (operator-sdk's manager sets it in its Deployment).
IMAGE_ENV = "MEMCACHED_IMAGE"
#: The value to give MEMCACHED_IMAGE when nothing else is wanted (see the README).
DEFAULT_IMAGE = "memcached:1.6.26-alpine3.19"
#: The backend Service's port (memcached's well-known port), in front of `containerPort`.
SERVICE_PORT = 11211

# Condition types and reasons, as operator-sdk's sample names them.
AVAILABLE = "Available"
DEGRADED = "Degraded"
RECONCILING = "Reconciling"
RESIZING = "Resizing"
FINALIZING = "Finalizing"

_LABEL_VALUE = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?$")


class MissingImage(Exception):
    """MEMCACHED_IMAGE is not set."""


def memcached_image(version: str | None) -> str:
    """The image: MEMCACHED_IMAGE, with its tag replaced by `version` when one is given."""
    image = os.environ.get(IMAGE_ENV, "")
    if not image:
        raise MissingImage(f"unable to find {IMAGE_ENV} environment variable with the image")
    if version:
        repository, _ = split_image(image)
        return f"{repository}:{version}"
    return image


def split_image(image: str) -> tuple[str, str | None]:
    """(repository, tag or None); a registry's port (`host:5000/memcached`) is not a tag."""
    without_digest = image.split("@", 1)[0]
    repository, colon, tag = without_digest.rpartition(":")
    if not colon or "/" in tag:
        return without_digest, None
    return repository, tag


def image_version(image: str) -> str:
    """The value of the `app.kubernetes.io/version` label: the tag, `latest` when untagged."""
    _, tag = split_image(image)
    tag = tag or "latest"
    return tag if _LABEL_VALUE.match(tag) and len(tag) <= 63 else ""


def selector_labels(name: str) -> dict[str, str]:
    """The Deployment's selector: the original's, plus the Memcached's name (no overlap)."""
    return {
        "app.kubernetes.io/name": "memcached-operator",
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/managed-by": "MemcachedController",
    }


def pod_labels(name: str, image: str) -> dict[str, str]:
    """The pods' labels: the selector's and the version (not in the selector: it changes)."""
    labels = selector_labels(name)
    version = image_version(image)
    if version:
        labels["app.kubernetes.io/version"] = version
    return labels


def deployment_for(memcached: Memcached, image: str) -> dict[str, Any]:
    """The Deployment `<name>`: the original's pod, rolled one pod at a time."""
    name = memcached.metadata.name or ""
    port = memcached.spec.container_port
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": memcached.metadata.namespace},
        "spec": {
            "replicas": memcached.spec.size,
            "selector": {"matchLabels": selector_labels(name)},
            # A cache loses what a stopped pod held: replace one pod at a time, and never run
            # more than `size` (each pod has a fixed memory budget). At least size-1 serve.
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
            },
            "template": {
                "metadata": {"labels": pod_labels(name, image)},
                "spec": {
                    "securityContext": {
                        "runAsNonRoot": True,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [
                        {
                            "name": "memcached",
                            "image": image,
                            "imagePullPolicy": "IfNotPresent",
                            # The image's entrypoint runs memcached with these flags (the
                            # original sets command: memcached + the same flags).
                            "args": ["-m=64", "-o", "modern", "-v"],
                            "ports": [
                                {"containerPort": port, "name": "memcached", "protocol": "TCP"}
                            ],
                            # Ready once memcached accepts connections: what `Available` and
                            # the Service's endpoints wait for.
                            "readinessProbe": {
                                "tcpSocket": {"port": "memcached"},
                                "initialDelaySeconds": 1,
                                "periodSeconds": 5,
                            },
                            "securityContext": {
                                "runAsNonRoot": True,
                                "runAsUser": 1001,
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                        }
                    ],
                },
            },
        },
    }


def service_for(memcached: Memcached) -> dict[str, Any]:
    """The Service `<name>` in front of the pods, for clients and a MemcachedProxy."""
    name = memcached.metadata.name or ""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": memcached.metadata.namespace},
        "spec": {
            "type": "ClusterIP",
            "selector": selector_labels(name),
            "ports": [
                {
                    "name": "memcached",
                    "port": SERVICE_PORT,
                    "targetPort": "memcached",
                    "protocol": "TCP",
                }
            ],
        },
    }


def rolled_out(deployment: dict[str, Any], size: int) -> tuple[bool, int]:
    """Whether the Deployment controller reports `size` available pods of the current
    template (and no others), and how many are available."""
    status = deployment.get("status") or {}
    available = int(status.get("availableReplicas") or 0)
    current = int(status.get("observedGeneration") or 0) >= int(
        (deployment.get("metadata") or {}).get("generation") or 0
    )
    done = (
        current
        and available == size
        and int(status.get("updatedReplicas") or 0) == size
        and int(status.get("replicas") or 0) == size
    )
    return done, available


GROUP: Final = "cache.example.com"
#: Exactly what this reconciler does (operator-sdk's role without its create/delete on
#: memcacheds and delete on deployments), instead of all that `for_` and `owns` imply.
PERMISSIONS: Final = [
    Permission(GROUP, "memcacheds", ["get", "list", "watch", "patch"], reason="the finalizer"),
    Permission(GROUP, "memcacheds/status", ["get", "update", "patch"]),
    Permission(GROUP, "memcacheds/finalizers", ["update"]),
    Permission("apps", "deployments", ["get", "list", "watch", "patch"], reason="applied"),
    Permission("", "services", ["get", "list", "watch", "patch"], reason="applied"),
]


@op.reconciler(
    for_=Memcached,
    owns=[kinds.Deployment, kinds.Service],
    infer_permissions=False,
    permissions=PERMISSIONS,
)
async def reconcile_memcached(ctx: setpoint.Context, request: setpoint.Request) -> None:
    memcached: Memcached | None = await ctx.get()
    if memcached is None:
        return  # deleted: its Deployment and Service go with it (garbage collection)
    name, namespace = request.name, request.namespace
    if memcached.status is None or not memcached.status.conditions:
        memcached = await ctx.set_condition(
            AVAILABLE, "Unknown", RECONCILING, "Starting reconciliation"
        )

    if memcached.metadata.deletion_timestamp is not None:
        if FINALIZER in (memcached.metadata.finalizers or []):
            await ctx.set_condition(
                DEGRADED,
                "Unknown",
                FINALIZING,
                f"Performing finalizer operations for the custom resource: {name} ",
            )
            ctx.recorder.warning(
                memcached,
                "Deleting",
                f"Custom Resource {name} is being deleted from the namespace {namespace}",
            )
            memcached = await ctx.set_condition(
                DEGRADED,
                "True",
                FINALIZING,
                f"Finalizer operations for custom resource {name} name were successfully "
                "accomplished",
            )
            # The status writes changed the resourceVersion: remove with the one they returned.
            await remove_finalizer(ctx.client, memcached, FINALIZER)
        return
    await ensure_finalizer(ctx.client, memcached, FINALIZER)

    existing = await ctx.get(kinds.Deployment, name)
    try:
        image = memcached_image(memcached.spec.version)
        deployment = await ctx.apply_owned(deployment_for(memcached, image))
    except (MissingImage, ApiError) as error:
        if existing is None:
            message = f"Failed to create Deployment for the custom resource ({name}): ({error})"
            reason = RECONCILING
        else:
            message = f"Failed to update the size for the custom resource ({name}): ({error})"
            reason = RESIZING
        await ctx.set_condition(AVAILABLE, "False", reason, message)
        raise setpoint.RetryLater(message) from None
    await ctx.apply_owned(service_for(memcached))

    size = memcached.spec.size
    done, available = rolled_out(deployment, size)
    if done:
        await ctx.set_condition(
            AVAILABLE,
            "True",
            RECONCILING,
            f"Deployment for custom resource ({name}) with {size} replicas created successfully",
        )
    else:
        # The Deployment's status changes wake this reconcile again (it is owned).
        await ctx.set_condition(
            AVAILABLE,
            "False",
            RECONCILING,
            f"Deployment for custom resource ({name}): {available} of {size} replicas available",
        )
