"""Reconciles Ats: PENDING until the schedule, RUNNING while the pod runs, DONE when it ended.

Level-based: each run reads the At and its pod and takes the next step from what it sees.
Waiting for the schedule is a ``requeue_at`` on the operator's clock (no polling); waiting for
the pod is waiting for its events (``owns``).
"""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime
from typing import Any, Final

import setpoint
from cnat_operator.api.v1alpha1.at import DONE, FAILED, PENDING, RUNNING, At, AtStatus
from cnat_operator.operator import op
from setpoint import kinds
from setpoint.api.rbac import Permission
from setpoint.controller import is_controlled_by, set_controller_reference

#: The original's only accepted layout (Go's ``2006-01-02T15:04:05Z``): UTC, no fractions.
SCHEDULE_LAYOUT: Final = "%Y-%m-%dT%H:%M:%SZ"
_SCHEDULE_SHAPE: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_ENDED: Final = ("Succeeded", "Failed")


class InvalidSpec(ValueError):
    """The spec cannot be run as it is; the message says why, for status and the Event."""


def parse_schedule(schedule: str) -> datetime:
    """``spec.schedule`` as an aware UTC time; raises InvalidSpec for anything else."""
    if not _SCHEDULE_SHAPE.fullmatch(schedule):
        raise InvalidSpec(f"spec.schedule {schedule!r} is not a UTC time like 2019-04-12T10:12:00Z")
    try:
        return datetime.strptime(schedule, SCHEDULE_LAYOUT).replace(tzinfo=UTC)
    except ValueError as error:  # the right shape, but e.g. month 13
        raise InvalidSpec(f"spec.schedule {schedule!r} is not a valid time: {error}") from None


def split_command(command: str) -> list[str]:
    """``spec.command`` as argv, split with shell rules (quotes group words), never empty."""
    try:
        argv = shlex.split(command)
    except ValueError as error:  # an unclosed quote
        raise InvalidSpec(f"spec.command {command!r} cannot be split: {error}") from None
    if not argv:
        raise InvalidSpec("spec.command is empty: there is nothing to run")
    return argv


def pod_name(at: At) -> str:
    return f"{at.metadata.name}-pod"


def desired_pod(at: At, argv: list[str]) -> dict[str, Any]:
    """The pod that runs the command once: restartPolicy Never, so a failure ends it too."""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(at),
            "namespace": at.metadata.namespace,
            "labels": {"app": at.metadata.name},
        },
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "busybox", "image": "busybox", "command": argv}],
        },
    }
    set_controller_reference(at, pod)
    return pod


GROUP: Final = "cnat.programming-kubernetes.info"
#: Exactly what this reconciler does, instead of all that `for_` and `owns` could imply.
PERMISSIONS: Final = [
    Permission(GROUP, "ats", ["get", "list", "watch"]),
    Permission(GROUP, "ats/status", ["get", "update", "patch"]),
    # The pod's owner reference blocks the At's deletion (blockOwnerDeletion), which clusters
    # running the OwnerReferencesPermissionEnforcement admission plugin allow only to this.
    Permission(GROUP, "ats/finalizers", ["update"]),
    Permission("", "pods", ["get", "list", "watch", "create"]),
]


@op.reconciler(for_=At, owns=[kinds.Pod], infer_permissions=False, permissions=PERMISSIONS)
async def reconcile_at(ctx: setpoint.Context, request: setpoint.Request) -> setpoint.Result | None:
    at: At | None = await ctx.get()
    if at is None:
        return None  # deleted: the garbage collector deletes its pod
    status = at.status or AtStatus()
    phase = status.phase or PENDING
    try:
        if phase == PENDING:
            when = parse_schedule(at.spec.schedule)
            argv = split_command(at.spec.command)
            if when > ctx.now():
                message = f"runs at {at.spec.schedule}"
                if (status.phase, status.message) != (PENDING, message):
                    await ctx.patch_status({"phase": PENDING, "message": message})
                    ctx.recorder.normal(at, "Scheduled", message)
                return setpoint.Result(requeue_at=when)
            message = f"running {shlex.join(argv)} in pod {pod_name(at)}"
            at = await ctx.patch_status({"phase": RUNNING, "message": message})
            ctx.recorder.normal(at, "Running", message)
            await _run(ctx, at, argv)
        elif phase == RUNNING:
            await _run(ctx, at, split_command(at.spec.command))
        # DONE (or a phase this operator does not know): nothing more to do.
    except InvalidSpec as error:
        # Reported once, not retried: the next edit of the spec wakes the reconcile again (the
        # run that the status write's own event wakes finds it reported and records nothing).
        if status.message != str(error):
            await ctx.patch_status({"phase": phase, "message": str(error)})
            ctx.recorder.warning(at, "InvalidSpec", str(error))
    return None


async def _run(ctx: setpoint.Context, at: At, argv: list[str]) -> None:
    """Create the pod if it is missing; mark the At DONE once the pod has ended."""
    pod = await ctx.get(kinds.Pod, pod_name(at))
    if pod is None:
        await ctx.client.create(desired_pod(at, argv))
        ctx.recorder.normal(at, "PodCreated", f"created pod {pod_name(at)}")
        return
    if not is_controlled_by(pod, at):
        message = f"pod {pod_name(at)} exists and is not controlled by At {at.metadata.name}"
        ctx.recorder.warning(at, "PodExists", message)
        raise setpoint.RetryLater(message)
    pod_phase = (pod.get("status") or {}).get("phase")
    if pod_phase not in _ENDED:
        return  # its next status change wakes this reconcile
    message = f"pod {pod_name(at)} {pod_phase.lower()}{_exit_codes(pod)}"
    await ctx.patch_status({"phase": DONE, "result": pod_phase, "message": message})
    if pod_phase == FAILED:
        ctx.recorder.warning(at, "Failed", message)
    else:
        ctx.recorder.normal(at, "Succeeded", message)


def _exit_codes(pod: dict[str, Any]) -> str:
    codes = [
        str(terminated["exitCode"])
        for container in (pod.get("status") or {}).get("containerStatuses") or []
        if (terminated := (container.get("state") or {}).get("terminated")) is not None
    ]
    return f" (exit code {', '.join(codes)})" if codes else ""
