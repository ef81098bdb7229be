"""Field ownership across the versions of a custom resource.

A managedFields entry owns paths of the version it was written in (its ``apiVersion``). When
a write changes fields, upstream's structured-merge-diff compares the object before and after
*in each such version* and intersects the changes with the entry's paths: a v1 manager that
owns ``spec.schedule`` (a string in v1) loses it to a v2 update that sets
``spec.schedule.minute``, and conflicts with a v2 apply that does. These steps do that after
the write's own version was handled (:func:`.server_side_apply`, :func:`.track_update`): the
objects before and after are converted (one review per other version), and the changed paths
leave those managers' entries — for an apply, after a 409 unless forced.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from setpoint.cluster.apiserver.patch.field_paths import FieldSet, Path, compare, sort_paths
from setpoint.cluster.apiserver.patch.managed_fields import (
    ManagerEntry,
    decode_entries,
    encode_entries,
    tracked,
)
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode
from setpoint.cluster.apiserver.patch.server_side_apply import ApplyResult, apply_conflict

#: The merge schema of a version of the resource's kind.
SchemaOf = Callable[[str], MergeNode]
#: Copies of objects converted to a version of their CRD (one review).
ConvertTo = Callable[[list[dict[str, Any]], str], Awaitable[list[dict[str, Any]]]]


def has_other_versions(managed_fields: Any, api_version: str) -> bool:
    """Whether some managedFields entry was written in another version than ``api_version``."""
    return isinstance(managed_fields, list) and any(
        isinstance(entry, dict) and entry.get("apiVersion") != api_version
        for entry in managed_fields
    )


async def _changes(
    owners: dict[str, list[ManagerEntry]],
    before: dict[str, Any],
    after: dict[str, Any],
    convert: ConvertTo,
    schema_of: SchemaOf,
    subresource: str,
    has_status: bool,
) -> dict[str, tuple[FieldSet, FieldSet]]:
    """For each other version: the paths the write changed and removed, in that version."""
    changes: dict[str, tuple[FieldSet, FieldSet]] = {}
    for api_version in owners:
        version = api_version.rpartition("/")[2]
        old, new = await convert([before, after], version)
        comparison = compare(schema_of(version), old, new, value_structs=False)
        changes[api_version] = (
            tracked(comparison.changed, subresource, has_status),
            tracked(comparison.removed, subresource, has_status),
        )
    return changes


def _by_version(
    entries: list[ManagerEntry], api_version: str, manager: str | None, subresource: str
) -> dict[str, list[ManagerEntry]]:
    owners: dict[str, list[ManagerEntry]] = {}
    for entry in entries:
        mine = entry.manager == manager and entry.subresource == subresource
        if entry.api_version != api_version and not mine:
            owners.setdefault(entry.api_version, []).append(entry)
    return owners


async def settle_other_versions(
    result: ApplyResult,
    live: dict[str, Any],
    *,
    api_version: str,
    manager: str,
    subresource: str,
    force: bool,
    has_status: bool,
    convert: ConvertTo,
    schema_of: SchemaOf,
) -> None:
    """After an apply in ``api_version``: check and update ``result``'s entries written in
    other versions. Raises the apply conflict (409) when one of them owns a field the apply
    changes there and ``force`` is not set."""
    if not result.changed or not has_other_versions(result.managed_fields, api_version):
        return
    entries = decode_entries(result.managed_fields, stored=True) or []
    owners = _by_version(entries, api_version, manager, subresource)
    if not owners:
        return
    changes = await _changes(owners, live, result.obj, convert, schema_of, subresource, has_status)
    conflicts: list[tuple[ManagerEntry, Path]] = [
        (owner, path)
        for version, version_owners in owners.items()
        for owner in version_owners
        for path in sort_paths(owner.owned(changes[version][0]))
    ]
    if conflicts and not force:
        conflicts.sort(key=lambda c: c[0].identifier)
        raise apply_conflict(conflicts)
    _release(owners, changes)
    managed = encode_entries(entries)
    result.managed_fields = managed
    result.obj.setdefault("metadata", {})["managedFields"] = managed


async def release_in_other_versions(
    old: dict[str, Any],
    new: dict[str, Any],
    *,
    api_version: str,
    subresource: str,
    has_status: bool,
    convert: ConvertTo,
    schema_of: SchemaOf,
) -> None:
    """After an update in ``api_version`` (``new``'s managedFields already tracked): the
    managers of other versions give up what the update changed in their version."""
    metadata = new.get("metadata") or {}
    if not has_other_versions(metadata.get("managedFields"), api_version):
        return
    entries = decode_entries(metadata.get("managedFields"), stored=True) or []
    owners = _by_version(entries, api_version, None, subresource)
    changes = await _changes(owners, old, new, convert, schema_of, subresource, has_status)
    if _release(owners, changes):
        managed = encode_entries(entries)
        if managed:
            metadata["managedFields"] = managed
        else:
            metadata.pop("managedFields", None)


def _release(
    owners: dict[str, list[ManagerEntry]], changes: dict[str, tuple[FieldSet, FieldSet]]
) -> bool:
    """Drop the changed and removed paths from their owners; whether any entry changed."""
    released = False
    for version, version_owners in owners.items():
        changed, removed = changes[version]
        for owner in version_owners:
            if owner.owned(changed) or owner.owned(removed):
                owner.discard(changed)
                owner.discard(removed)
                released = True
    return released
