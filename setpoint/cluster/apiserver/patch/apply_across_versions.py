"""Server-side apply against managers that wrote in another version of a custom resource.

A managedFields entry owns paths of the version it was written in (its ``apiVersion``). When
an apply changes fields, upstream's structured-merge-diff compares the object before and after
*in each such version* and intersects the changes with the entry's paths: a v1 manager that owns
``spec.schedule`` (a string in v1) conflicts with a v2 apply that sets
``spec.schedule.minute``. This step does that after :func:`.server_side_apply` has merged the
configuration: the live and merged objects are converted (one review per version), the
conflicts raised (409, unless forced), and forced or not, the changed paths leave those
managers' entries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from setpoint.cluster.apiserver.patch.field_paths import FieldSet, Path, compare
from setpoint.cluster.apiserver.patch.managed_fields import (
    ManagerEntry,
    decode_entries,
    encode_entries,
    tracked,
)
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode
from setpoint.cluster.apiserver.patch.server_side_apply import ApplyResult, apply_conflict
from setpoint.cluster.apiserver.registry.object_operations import ObjectOperations
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

#: The merge schema of a version of the resource's kind.
SchemaOf = Callable[[str], MergeNode]


async def settle_other_versions(
    ops: ObjectOperations,
    resource: ServedResource,
    live: dict[str, Any],
    result: ApplyResult,
    *,
    manager: str,
    subresource: str,
    force: bool,
    schema_of: SchemaOf,
) -> None:
    """Check and update ``result``'s entries written in versions other than ``resource``'s.

    Raises the apply conflict (409) when one of them owns a field the apply changes there and
    ``force`` is not set. Only custom resources (several versions, one converter) need it.
    """
    if resource.converter is None or not result.changed:
        return
    entries = decode_entries(result.managed_fields, stored=True) or []
    foreign: dict[str, list[ManagerEntry]] = {}
    for entry in entries:
        mine = entry.manager == manager and entry.subresource == subresource
        if entry.api_version != resource.api_version and not mine:
            foreign.setdefault(entry.api_version, []).append(entry)
    if not foreign:
        return
    conflicts: list[tuple[ManagerEntry, Path]] = []
    changes: dict[str, tuple[FieldSet, FieldSet]] = {}
    for api_version, owners in foreign.items():
        version = api_version.rpartition("/")[2]
        before, after = await ops.convert_objects(resource, [live, result.obj], version)
        comparison = compare(schema_of(version), before, after, value_structs=False)
        changed = tracked(comparison.changed, subresource, resource.has_status)
        removed = tracked(comparison.removed, subresource, resource.has_status)
        changes[api_version] = (changed, removed)
        conflicts.extend((owner, path) for owner in owners for path in owner.owned(changed))
    if conflicts and not force:
        conflicts.sort(key=lambda c: c[0].identifier)
        raise apply_conflict(conflicts)
    for api_version, owners in foreign.items():
        changed, removed = changes[api_version]
        for owner in owners:
            owner.discard(changed)
            owner.discard(removed)
    managed = encode_entries(entries)
    result.managed_fields = managed
    metadata = result.obj.setdefault("metadata", {})
    if isinstance(metadata, dict):
        metadata["managedFields"] = managed
