"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of a workload's replica count.

Built-in workloads keep it at ``spec.replicas`` (defaulting to 1) with ``spec.selector``;
custom resources say where in their CRD's ``subresources.scale``.
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.api.selectors import LabelSelector, SelectorError
from setpoint.cluster.apiserver import crds
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

BUILTIN_SCALE: Final = {
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
}


def spec_replicas_path(resource: ServedResource) -> str:
    """Where the replica count the Scale shows lives in the object."""
    spec = resource.scale_spec or BUILTIN_SCALE
    return str(spec.get("specReplicasPath") or ".spec.replicas")


def scale_of(resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
    """The ``autoscaling/v1`` Scale of an object with the ``scale`` subresource."""
    if resource.scale_spec is not None:
        return crds.scale_of(obj, resource.scale_spec)
    scale = crds.scale_of(obj, BUILTIN_SCALE)
    spec_replicas, found = crds.read_path(obj, ".spec.replicas")
    # Built-in workloads default spec.replicas to 1.
    scale["spec"] = {"replicas": spec_replicas if found and isinstance(spec_replicas, int) else 1}
    raw_selector, _ = crds.read_path(obj, ".spec.selector")
    if isinstance(raw_selector, dict) and resource.kind == "ReplicationController":
        # A ReplicationController's selector is a plain label map.
        raw_selector = {"matchLabels": raw_selector}
    if isinstance(raw_selector, dict):
        try:
            scale["status"]["selector"] = str(LabelSelector.from_dict(raw_selector))
        except SelectorError:
            pass
    return scale
