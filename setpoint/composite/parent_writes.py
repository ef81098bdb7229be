"""Writes to the parent object a controller makes: its finalizer, its status, its failures.

The status is *replaced* by the hook's (plus ``observedGeneration``), as Metacontroller does, and
nothing is sent when the cached status is already that. A failure is reported as a Warning
Event ``SyncError`` and as the condition ``Synced=False`` (reason ``SyncError``, the one-line
message) merged into the current status, which the next successful sync replaces. Every write
names the parent's uid, so a parent deleted and created again under the same name is never
written with another's data.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from setpoint.api.conditions import set_status_condition
from setpoint.api.gvk import ResourceInfo
from setpoint.client.errors import NotFound

__all__ = [
    "SYNCED_CONDITION",
    "report_failure",
    "set_finalizer",
    "write_status",
]

#: Parents whose last status write is remembered per controller (see `write_status`).
MAX_REMEMBERED_PARENTS = 100_000
#: The condition a failed sync sets to False on the parent.
SYNCED_CONDITION = "Synced"
#: The Event reason of a failed sync (Metacontroller's).
SYNC_ERROR_REASON = "SyncError"


def _uid_test(parent: Mapping[str, Any]) -> dict[str, Any]:
    return {"op": "test", "path": "/metadata/uid", "value": parent["metadata"]["uid"]}


async def _patch(
    client: Any,
    resource: ResourceInfo,
    parent: Mapping[str, Any],
    patch: list[dict[str, Any]],
    status: bool,
) -> dict[str, Any]:
    metadata = parent["metadata"]
    subresource = "status" if status and "status" in resource.subresources else None
    answer: dict[str, Any] = await client.patch(
        resource.api_version,
        resource.kind,
        metadata["name"],
        [_uid_test(parent), *patch],
        namespace=metadata.get("namespace"),
        patch_type="json",
        subresource=subresource,
    )
    return answer


async def set_finalizer(
    client: Any, resource: ResourceInfo, parent: dict[str, Any], finalizer: str, present: bool
) -> dict[str, Any]:
    """Add or remove ``finalizer``; the parent as written (unchanged when nothing to do)."""
    finalizers = list(parent["metadata"].get("finalizers") or [])
    if (finalizer in finalizers) == present:
        return parent
    if present:
        finalizers.append(finalizer)
    else:
        finalizers = [f for f in finalizers if f != finalizer]
    test_version = {
        "op": "test",
        "path": "/metadata/resourceVersion",
        "value": parent["metadata"]["resourceVersion"],
    }
    return await _patch(
        client,
        resource,
        parent,
        [test_version, {"op": "add", "path": "/metadata/finalizers", "value": finalizers}],
        status=False,
    )


async def write_status(
    client: Any,
    resource: ResourceInfo,
    parent: dict[str, Any],
    status: dict[str, Any] | None,
    written: dict[str, tuple[Any, Any]] | None = None,
) -> bool:
    """Replace the parent's status with ``status`` plus ``observedGeneration``; False when it
    already was that (no request) or the parent is gone.

    ``written`` remembers, per parent uid, the last status sent and the status the server
    stored from it: a schema that prunes fields (``observedGeneration`` on a CRD that does not
    declare it) then costs one write per change, not one per sync."""
    desired = dict(status or {})
    desired["observedGeneration"] = parent["metadata"].get("generation", 0)
    current = parent.get("status")
    uid = parent["metadata"]["uid"]
    if current == desired or (written is not None and written.get(uid) == (desired, current)):
        return False
    try:
        answer = await _patch(
            client, resource, parent, [{"op": "add", "path": "/status", "value": desired}], True
        )
    except NotFound:
        return False
    if written is not None:
        written[uid] = (desired, answer.get("status"))
        if len(written) > MAX_REMEMBERED_PARENTS:
            del written[next(iter(written))]  # the oldest: its parent is likely gone
    return True


async def report_failure(
    client: Any,
    recorder: Any,
    resource: ResourceInfo,
    parent: dict[str, Any],
    message: str,
) -> None:
    """A Warning Event and the ``Synced=False`` condition naming the problem."""
    recorder.warning(parent, SYNC_ERROR_REASON, f"Sync error: {message}")
    current = copy.deepcopy(parent)
    if not isinstance(current.get("status"), dict):
        current["status"] = {}
    changed = set_status_condition(
        current,
        type=SYNCED_CONDITION,
        status="False",
        reason=SYNC_ERROR_REASON,
        message=message[:32768],
        observed_generation=parent["metadata"].get("generation"),
    )
    if not changed:
        return
    try:
        await _patch(
            client,
            resource,
            parent,
            [{"op": "add", "path": "/status", "value": current["status"]}],
            True,
        )
    except NotFound:
        pass
