"""``create_or_update`` / ``create_or_patch``: make an object look the way a function says.

Both read the object (from the API server, or from ``reader`` — the cache, which is what
``ctx.create_or_update`` passes), let ``mutate(obj)`` set the fields the controller owns, and
write only if something changed (no-op writes would bump resourceVersion and wake every watcher,
and controllers that always write loop forever). They mirror controller-runtime's
``controllerutil.CreateOrUpdate`` and ``CreateOrPatch``:

- absent → ``mutate`` the skeleton (apiVersion, kind, name, namespace) and create: ``CREATED``;
- present, and every field ``mutate`` set already has that value → no write: ``UNCHANGED``.
  Only what ``mutate`` set counts: when it replaces a whole field (``obj["spec"] = {...}``),
  what the server defaulted inside it (a Deployment's ``strategy``, a container's
  ``imagePullPolicy``) is not a difference; a key that ``mutate`` deletes from a mapping it
  edited in place is one;
- ``create_or_update``: PUT the whole object with the resourceVersion read (``Conflict`` if it
  changed in between, which makes the reconcile retry): ``UPDATED``;
- ``create_or_patch``: a merge patch of the changes outside ``status``, and a separate patch of
  the ``status`` subresource: ``UPDATED``, ``UPDATED_STATUS`` (both) or ``UPDATED_STATUS_ONLY``.

``mutate`` may be sync or async; it must not change the name or namespace. The dict passed in is
updated in place to what the server returned, and also returned.
"""

from __future__ import annotations

import base64
import copy
import enum
import inspect
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from setpoint.api.patch import create_merge_patch, json_equal
from setpoint.client.client import Client
from setpoint.client.errors import NotFound

__all__ = [
    "Mutate",
    "ObjectReader",
    "OperationResult",
    "create_or_patch",
    "create_or_update",
    "differs",
]

#: Sets the desired fields on the object (in place); may be async.
Mutate = Callable[[dict[str, Any]], Awaitable[None] | None]
#: Reads the current object: ``(api_version, kind, name, namespace) -> dict | None``.
ObjectReader = Callable[[str, str, str, str | None], Awaitable[dict[str, Any] | None]]


def _tracked_copy(value: Any, originals: set[int]) -> Any:
    """A deep copy of JSON data that remembers the ids of the containers it made."""
    if isinstance(value, dict):
        copied: Any = {k: _tracked_copy(v, originals) for k, v in value.items()}
    elif isinstance(value, list):
        copied = [_tracked_copy(v, originals) for v in value]
    else:
        return value
    originals.add(id(copied))
    return copied


def differs(current: Any, desired: Any, originals: set[int] | None = None) -> bool:
    """Whether writing ``desired`` would change ``current``, counting only what was set.

    A mapping in ``desired`` differs when one of its keys has another value in ``current``;
    keys only in ``current`` count as deleted only when the mapping is one of ``originals``
    (edited in place, not replaced). Lists compare item by item, with the same rule.
    """
    originals = originals if originals is not None else set()
    if isinstance(desired, dict):
        if not isinstance(current, dict):
            return True
        if "stringData" in desired and desired.get("kind") == "Secret":
            return _secret_differs(current, desired, originals)
        for key, value in desired.items():
            if key not in current:
                if value is not None:
                    return True
            elif differs(current[key], value, originals):
                return True
        return id(desired) in originals and any(
            key not in desired and not (key == "data" and "stringData" in desired)
            for key in current
        )
    if isinstance(desired, list):
        if not isinstance(current, list) or len(current) != len(desired):
            return True
        return any(differs(c, d, originals) for c, d in zip(current, desired, strict=True))
    return not json_equal(current, desired)


def _secret_differs(current: dict[str, Any], desired: dict[str, Any], originals: set[int]) -> bool:
    """:func:`differs` for a Secret written with ``stringData``, compared as the API server
    stores it: ``stringData`` is write-only, merged into ``data`` base64-encoded, so the cached
    Secret (which has only ``data``) equals it when the values are the same."""
    string_data = desired.get("stringData")
    if desired.get("apiVersion") != "v1" or not isinstance(string_data, dict):
        string_data = {}
    given = desired.get("data")
    data = dict(given) if isinstance(given, dict) else {}
    for key, value in string_data.items():
        if isinstance(value, str):
            data[key] = base64.b64encode(value.encode()).decode("ascii")
    stored = {key: value for key, value in desired.items() if key != "stringData"}
    stored["data"] = data
    # Edited in place, the merged data replaces the stored one (keys left out are deleted) when
    # the Secret's data was kept and edited, or dropped from the Secret.
    tracked = {id(stored)} if id(desired) in originals else set()
    if id(given) in originals or (given is None and id(desired) in originals):
        tracked.add(id(data))
    try:
        originals.update(tracked)
        return differs(current, stored, originals)
    finally:
        originals.difference_update(tracked)


class OperationResult(enum.StrEnum):
    """What ``create_or_update`` / ``create_or_patch`` did (controller-runtime's names)."""

    UNCHANGED = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    UPDATED_STATUS = "updatedStatus"
    UPDATED_STATUS_ONLY = "updatedStatusOnly"


def _identity(obj: MutableMapping[str, Any]) -> tuple[str, str, str, str | None]:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise ValueError("apiVersion: the object must have a non-empty apiVersion")
    if not isinstance(kind, str) or not kind:
        raise ValueError("kind: the object must have a non-empty kind")
    metadata = obj.get("metadata")
    if not isinstance(metadata, MutableMapping):
        raise ValueError("metadata: the object must have metadata with a name")
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(
            "metadata.name: required (create_or_update addresses one object; generateName "
            "cannot be used)"
        )
    namespace = metadata.get("namespace") or None
    return api_version, kind, name, namespace


async def _mutate(
    mutate: Mutate, obj: dict[str, Any], identity: tuple[str, str, str, str | None]
) -> None:
    outcome = mutate(obj)
    if inspect.isawaitable(outcome):
        await outcome
    try:
        after = _identity(obj)
    except ValueError as exc:
        raise ValueError(f"mutate function broke the object: {exc}") from None
    if after[2:] != identity[2:]:
        raise ValueError(
            "mutate function changed the object's name or namespace "
            f"({identity[3]}/{identity[2]} -> {after[3]}/{after[2]}); it must not"
        )
    if after[:2] != identity[:2]:
        raise ValueError(
            f"mutate function changed apiVersion/kind ({identity[0]} {identity[1]} -> "
            f"{after[0]} {after[1]}); it must not"
        )


async def _get_or_none(
    client: Client, identity: tuple[str, str, str, str | None], reader: ObjectReader | None
) -> Any:
    api_version, kind, name, namespace = identity
    if reader is not None:
        return await reader(api_version, kind, name, namespace)
    try:
        return await client.get(api_version, kind, name, namespace=namespace)
    except NotFound:
        return None


def _replace(target: MutableMapping[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    target.clear()
    target.update(source)
    return source


async def _read_and_mutate(
    client: Client, obj: MutableMapping[str, Any], mutate: Mutate, reader: ObjectReader | None
) -> tuple[dict[str, Any] | None, dict[str, Any], set[int]]:
    """The object as read (None if absent), a copy ``mutate`` has applied to, and the ids of
    the containers of that copy (to tell edits in place from replacements).

    When the object is absent, ``mutate`` is applied to a copy of ``obj`` (the skeleton).
    """
    identity = _identity(obj)
    current = await _get_or_none(client, identity, reader)
    originals: set[int] = set()
    desired = _tracked_copy(current, originals) if current is not None else copy.deepcopy(dict(obj))
    await _mutate(mutate, desired, identity)
    return current, desired, originals


async def _create(
    client: Client, obj: MutableMapping[str, Any], desired: dict[str, Any]
) -> tuple[OperationResult, dict[str, Any]]:
    desired.get("metadata", {}).pop("resourceVersion", None)
    created: dict[str, Any] = await client.create(desired)
    return OperationResult.CREATED, _replace(obj, created)


async def create_or_update(
    client: Client,
    obj: MutableMapping[str, Any],
    mutate: Mutate,
    *,
    reader: ObjectReader | None = None,
) -> tuple[OperationResult, dict[str, Any]]:
    """Create ``obj`` or update it (PUT) so that ``mutate`` holds; skips no-op writes.

    ``obj`` needs apiVersion, kind, metadata.name (and namespace for namespaced kinds).
    ``reader`` reads the current object (default: a GET from the API server).
    Raises ``Conflict`` if the object changed between the read and the write.
    """
    current, desired, originals = await _read_and_mutate(client, obj, mutate, reader)
    if current is None:
        return await _create(client, obj, desired)
    if not differs(current, desired, originals):
        return OperationResult.UNCHANGED, _replace(obj, current)
    updated: dict[str, Any] = await client.update(desired)
    return OperationResult.UPDATED, _replace(obj, updated)


async def create_or_patch(
    client: Client,
    obj: MutableMapping[str, Any],
    mutate: Mutate,
    *,
    optimistic: bool = False,
    reader: ObjectReader | None = None,
) -> tuple[OperationResult, dict[str, Any]]:
    """Create ``obj`` or merge-patch the changes ``mutate`` makes (status separately).

    With ``optimistic=True`` the patches carry the resourceVersion read, so a concurrent change
    gives ``Conflict`` (use it when ``mutate`` edits lists, which merge patches replace whole).
    ``reader`` reads the current object (default: a GET from the API server).
    """
    current, desired, originals = await _read_and_mutate(client, obj, mutate, reader)
    if current is None:
        return await _create(client, obj, desired)
    before_status, after_status = current.get("status"), desired.get("status")
    before_main = {k: v for k, v in current.items() if k != "status"}
    after_main = {k: v for k, v in desired.items() if k != "status"}
    main_changed = differs(before_main, after_main, originals)
    if "status" not in desired and id(desired) not in originals:
        status_changed = False  # a replaced object without status leaves status alone
    else:
        status_changed = differs(before_status, after_status, originals)
    main_patch = create_merge_patch(before_main, after_main) if main_changed else {}
    status_patch = (
        {"status": create_merge_patch(before_status or {}, after_status or {})}
        if status_changed else {}
    )  # fmt: skip
    if status_changed and after_status is None and before_status is not None:
        status_patch = {"status": None}
    if not main_patch and not status_patch:
        return OperationResult.UNCHANGED, _replace(obj, current)
    resource_version = (current.get("metadata") or {}).get("resourceVersion")
    result: dict[str, Any] = current
    if main_patch:
        if optimistic and resource_version:
            main_patch.setdefault("metadata", {})["resourceVersion"] = resource_version
        result = await client.patch(desired, main_patch)
        resource_version = (result.get("metadata") or {}).get("resourceVersion")
    if status_patch:
        if optimistic and resource_version:
            status_patch["metadata"] = {"resourceVersion": resource_version}
        result = await client.patch(desired, status_patch, subresource="status")
    if main_patch and status_patch:
        outcome = OperationResult.UPDATED_STATUS
    elif main_patch:
        outcome = OperationResult.UPDATED
    else:
        outcome = OperationResult.UPDATED_STATUS_ONLY
    return outcome, _replace(obj, result)
