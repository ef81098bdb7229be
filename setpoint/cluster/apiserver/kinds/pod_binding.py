"""``POST pods/{name}/binding``: assign a pod to a node (``pod/storage/storage.go`` BindingREST).

The scheduler binds through this too. One storage write sets ``spec.nodeName`` and adds the
``PodScheduled`` condition; the answer is ``201`` with a Success Status, as upstream.
"""

from __future__ import annotations

import time
from typing import Any

from setpoint.api import field_errors as fe
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations, Result
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.server_clock import server_time
from setpoint.cluster.apiserver.storage import KeyNotFoundError, RevisionConflictError
from setpoint.cluster.apiserver.storage.codec import encode_json

SUCCESS_BODY = encode_json(
    {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
)


async def bind_pod(
    operations: ObjectOperations,
    pods: ServedResource,
    namespace: str,
    name: str,
    binding: dict[str, Any],
    now: str | None = None,
) -> Result:
    """Bind pod ``namespace/name`` to ``binding.target.name``."""
    target = binding.get("target")
    node = target.get("name") if isinstance(target, dict) else None
    if not isinstance(node, str) or not node:
        raise status_errors.invalid("", "Binding", name, [fe.required("target.name", "")])
    record = operations.get_record(pods, namespace, name)
    pod = decode(record.value)
    meta = pod["metadata"]
    wanted_uid = (binding.get("metadata") or {}).get("uid")
    if wanted_uid and wanted_uid != meta.get("uid"):
        raise status_errors.conflict(
            "",
            "pods",
            name,
            f"Precondition failed: UID in precondition: {wanted_uid}, UID in object meta: "
            f"{meta.get('uid', '')}",
        )
    if "deletionTimestamp" in meta:
        raise status_errors.conflict(
            "", "pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host"
        )
    assigned = (pod.get("spec") or {}).get("nodeName")
    if assigned:
        raise status_errors.conflict(
            "", "pods/binding", name, f'pod {name} is already assigned to node "{assigned}"'
        )
    new = pod  # freshly decoded: ours to change
    new.setdefault("spec", {})["nodeName"] = node
    status = new.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append(
        {
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": now
            or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(server_time())),
        }
    )
    status["conditions"] = conditions
    storage = operations.storage
    try:
        written = storage.update(record.key, new, expected_revision=record.revision)
    except (KeyNotFoundError, RevisionConflictError):
        raise status_errors.conflict("", "pods", name, status_errors.OBJECT_MODIFIED) from None
    await storage.wait_durable(written.revision)
    return Result(201, SUCCESS_BODY)
