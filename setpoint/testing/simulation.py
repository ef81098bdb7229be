"""Steering the local cluster's simulation from tests: pod behaviour, kwok Stages, the clock.

A test that needs a container that fails, restarts or never pulls its image annotates the pod
(or the pod template of a Deployment, Job, CronJob …) with :func:`simulate`; one that needs the
full kwok lifecycle applies Stages with :func:`apply_stages` (kwok's own stage files work). Time
moves with :func:`advance_clock` / :func:`set_clock` on a cluster whose clock is manual: the
``manual_clock_cluster`` fixture of the plugin, a ``BackgroundCluster(clock=FakeClock())``, or
``setpoint cluster serve --clock manual``. They talk to the cluster over its API, like
``setpoint cluster clock``; an operator run with ``run_operator(...,
follow_cluster_clock=True)`` moves with it.

::

    pod = simulate(pod_manifest, exit_code=1)        # a crash loop (restartPolicy Always)
    await client.create(pod)
    await advance_clock(client, "5m")                 # restartCount grows, CrashLoopBackOff
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from setpoint.client.cluster_clock import (
    ClusterClockReading,
    advance_cluster_clock,
    read_cluster_clock,
    set_cluster_clock,
)
from setpoint.cluster.controllers.kubelet.simulation_annotations import (
    CONTAINERS,
    EXIT_CODE,
    IMAGE_PULL_ERROR,
    READY_AFTER,
    RUN_FOR,
)

if TYPE_CHECKING:
    from setpoint.client import Client

__all__ = [
    "ClusterClockReading",
    "advance_clock",
    "apply_stages",
    "read_clock",
    "set_clock",
    "simulate",
]

#: The cluster's clock, set and advanced over its API (see setpoint.client.cluster_clock).
read_clock = read_cluster_clock
advance_clock = advance_cluster_clock
set_clock = set_cluster_clock


def _pod_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """The metadata the kubelet reads: the pod's own, or its template's."""
    kind = obj.get("kind")
    spec = obj.setdefault("spec", {})
    if kind == "CronJob":
        spec = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
    if kind in (None, "Pod"):
        return obj.setdefault("metadata", {})  # type: ignore[no-any-return]
    return spec.setdefault("template", {}).setdefault("metadata", {})  # type: ignore[no-any-return]


def simulate(
    obj: Mapping[str, Any],
    *,
    exit_code: int | None = None,
    run_for: str | None = None,
    ready_after: str | None = None,
    image_pull_error: str | None = None,
    containers: Iterable[str] | None = None,
) -> dict[str, Any]:
    """A copy of ``obj`` (a Pod, or a kind with a pod template) whose simulated containers
    behave as asked: exit ``exit_code`` (after ``run_for``, a Go duration, default 1 s),
    become ready ``ready_after`` their start, or never pull their image (``image_pull_error``:
    the message, ``""`` for the runtime's "not found"); ``containers`` limits it to those.
    See ``docs/local-cluster.md`` ("Simulation controls")."""
    result = copy.deepcopy(dict(obj))
    annotations = _pod_metadata(result).setdefault("annotations", {})
    for key, value in (
        (EXIT_CODE, exit_code),
        (RUN_FOR, run_for),
        (READY_AFTER, ready_after),
        (IMAGE_PULL_ERROR, image_pull_error),
    ):
        if value is not None:
            annotations[key] = str(value)
    if containers is not None:
        annotations[CONTAINERS] = ",".join(containers)
    return result


def _stage_documents(item: Any) -> list[dict[str, Any]]:
    if isinstance(item, Mapping):
        return [dict(item)]
    path = Path(item)
    files = sorted(path.glob("*.y*ml")) if path.is_dir() else [path]
    found: list[dict[str, Any]] = []
    for file in files:
        found.extend(doc for doc in yaml.safe_load_all(file.read_text()) if doc)
    return found


async def apply_stages(client: Client, *items: Any) -> list[dict[str, Any]]:
    """Apply kwok Stages (objects, YAML files or directories of them, e.g. kwok's
    ``kustomize/stage/pod/fast``) with server-side apply; returns them as stored.

    A Stage the local cluster cannot run is refused by the API server (``Invalid``, naming
    the field); kustomization files in a directory are skipped.
    """
    applied = []
    for item in items:
        for document in _stage_documents(item):
            if document.get("kind") != "Stage":
                continue
            applied.append(
                await client.apply(document, field_manager="setpoint-testing", force=True)
            )
    return applied
