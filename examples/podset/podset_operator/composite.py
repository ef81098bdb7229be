"""PodSet as a composite controller: the sync hook is the whole operator (setpoint.composite)."""

import itertools

import setpoint
from podset_operator.api.v1alpha1.podset import PodSet
from setpoint import kinds
from setpoint.composite import SyncRequest, SyncResponse, composite

op = setpoint.Operator("podset-composite")
SLEEPER = {"containers": [{"name": "busybox", "image": "busybox", "command": ["sleep", "3600"]}]}


@composite(op, parent=PodSet, children=[kinds.Pod], generate_selector=True)
def sync(request: SyncRequest) -> SyncResponse:
    podset, pods = request.parent, request.children_of(kinds.Pod)
    name, taken = podset.metadata.name, {pod["metadata"]["name"] for pod in pods}
    alive = [p for p in pods if p["status"].get("phase") in (None, "Pending", "Running")]
    live = [p["metadata"]["name"] for p in alive if not p["metadata"].get("deletionTimestamp")]
    keep = live[: podset.spec.replicas]
    fresh = (n for i in itertools.count() if (n := f"{name}-pod-{i}") not in taken)
    names = keep + [next(fresh) for _ in range(podset.spec.replicas - len(keep))]
    children = [{"apiVersion": "v1", "kind": "Pod", "spec": SLEEPER,
                 "metadata": {"name": n, "labels": {"app": name}}} for n in names]  # fmt: skip
    return SyncResponse(children, status={"podNames": keep, "availableReplicas": len(keep)})
