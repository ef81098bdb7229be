"""The IndexedJob sync hook, ported from Metacontroller's ``examples/indexedjob`` to a Python
hook: the same observed-to-desired function, without the HTTP server around it.

Each index gets one Pod ``<job>-<index>`` (the template, plus ``JOB_INDEX`` in every
container's environment); at most ``parallelism`` run at once; the status counts the Pods by
phase and says ``Complete`` once ``completions`` succeeded. A finished job stops making Pods.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import setpoint
from indexedjob_operator.api import IndexedJob
from setpoint import kinds
from setpoint.composite import SyncRequest, SyncResponse, composite

op = setpoint.Operator("indexedjob-operator")


def index_of(job_name: str, pod_name: str) -> int:
    """The index in ``<job>-<index>``, or -1 for another name."""
    match = re.fullmatch(r"(.*)-(\d+)", pod_name)
    return int(match.group(2)) if match and match.group(1) == job_name else -1


def new_pod(job: IndexedJob, index: int) -> dict[str, Any]:
    pod = copy.deepcopy(job.spec.template)
    pod.update(apiVersion="v1", kind="Pod")
    pod["metadata"] = {**pod.get("metadata", {}), "name": f"{job.metadata.name}-{index}"}
    for container in pod["spec"]["containers"]:
        container["env"] = [*container.get("env", []), {"name": "JOB_INDEX", "value": str(index)}]
    return pod


def finished(job: IndexedJob) -> bool:
    conditions = job.status.conditions if job.status else []
    return any(c["type"] in ("Complete", "Failed") and c["status"] == "True" for c in conditions)


@composite(op, parent=IndexedJob, children=[kinds.Pod], generate_selector=True)
def sync(request: SyncRequest) -> SyncResponse:
    job: IndexedJob = request.parent
    observed: dict[int, dict[str, Any]] = {}
    counts = {"active": 0, "succeeded": 0, "failed": 0}
    for pod in request.children_of(kinds.Pod):
        index = index_of(job.metadata.name, pod["metadata"]["name"])
        if index < 0:
            continue
        phase = (pod.get("status") or {}).get("phase")
        counts[{"Succeeded": "succeeded", "Failed": "failed"}.get(phase, "active")] += 1
        observed[index] = pod
    if finished(job):
        # Done: keep what exists (Pod GC may remove it) and stop making Pods.
        return SyncResponse([new_pod(job, i) for i in observed], status=request.parent.status)
    complete = counts["succeeded"] == job.spec.completions
    status = {**counts, "conditions": [{"type": "Complete", "status": str(complete)}]}
    desired = {index: new_pod(job, index) for index in observed}
    active = counts["active"]
    for index in range(job.spec.completions):
        if index not in desired and active < job.spec.parallelism:
            desired[index] = new_pod(job, index)
            active += 1
    return SyncResponse(list(desired.values()), status=status)
