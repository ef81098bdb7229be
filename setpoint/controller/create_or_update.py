"""``create_or_update`` / ``create_or_patch``: make an object look the way a function says.

Both read the object from the API server, let ``mutate(obj)`` set the fields the controller owns,
and write only if something changed (no-op writes would bump resourceVersion and wake every
watcher, and controllers that always write loop forever). They mirror controller-runtime's
``controllerutil.CreateOrUpdate`` and ``CreateOrPatch``:

- absent → ``mutate`` the skeleton (apiVersion, kind, name, namespace) and create: ``CREATED``;
- present and unchanged by ``mutate`` → no write: ``UNCHANGED``;
- ``create_or_update``: PUT the whole object with the resourceVersion read (``Conflict`` if it
  changed in between, which makes the reconcile retry): ``UPDATED``;
- ``create_or_patch``: a merge patch of the changes outside ``status``, and a separate patch of
  the ``status`` subresource: ``UPDATED``, ``UPDATED_STATUS`` (both) or ``UPDATED_STATUS_ONLY``.

``mutate`` may be sync or async; it must not change the name or namespace. The dict passed in is
updated in place to what the server returned, and also returned.
"""

from __future__ import annotations

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
    "OperationResult",
    "create_or_patch",
    "create_or_update",
]

#: Sets the desired fields on the object (in place); may be async.
Mutate = Callable[[dict[str, Any]], Awaitable[None] | None]


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


async def _get_or_none(client: Client, identity: tuple[str, str, str, str | None]) -> Any:
    api_version, kind, name, namespace = identity
    try:
        return await client.get(api_version, kind, name, namespace=namespace)
    except NotFound:
        return None


def _replace(target: MutableMapping[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    target.clear()
    target.update(source)
    return source


async def _read_and_mutate(
    client: Client, obj: MutableMapping[str, Any], mutate: Mutate
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The object as the server has it (None if absent) and a copy ``mutate`` has applied to.

    When the object is absent, ``mutate`` is applied to a copy of ``obj`` (the skeleton).
    """
    identity = _identity(obj)
    current = await _get_or_none(client, identity)
    desired = copy.deepcopy(current if current is not None else dict(obj))
    await _mutate(mutate, desired, identity)
    return current, desired


async def _create(
    client: Client, obj: MutableMapping[str, Any], desired: dict[str, Any]
) -> tuple[OperationResult, dict[str, Any]]:
    desired.get("metadata", {}).pop("resourceVersion", None)
    created: dict[str, Any] = await client.create(desired)
    return OperationResult.CREATED, _replace(obj, created)


async def create_or_update(
    client: Client, obj: MutableMapping[str, Any], mutate: Mutate
) -> tuple[OperationResult, dict[str, Any]]:
    """Create ``obj`` or update it (PUT) so that ``mutate`` holds; skips no-op writes.

    ``obj`` needs apiVersion, kind, metadata.name (and namespace for namespaced kinds).
    Raises ``Conflict`` if the object changed between the read and the write.
    """
    current, desired = await _read_and_mutate(client, obj, mutate)
    if current is None:
        return await _create(client, obj, desired)
    if json_equal(current, desired):
        return OperationResult.UNCHANGED, _replace(obj, desired)
    updated: dict[str, Any] = await client.update(desired)
    return OperationResult.UPDATED, _replace(obj, updated)


async def create_or_patch(
    client: Client, obj: MutableMapping[str, Any], mutate: Mutate, *, optimistic: bool = False
) -> tuple[OperationResult, dict[str, Any]]:
    """Create ``obj`` or merge-patch the changes ``mutate`` makes (status separately).

    With ``optimistic=True`` the patches carry the resourceVersion read, so a concurrent change
    gives ``Conflict`` (use it when ``mutate`` edits lists, which merge patches replace whole).
    """
    current, desired = await _read_and_mutate(client, obj, mutate)
    if current is None:
        return await _create(client, obj, desired)
    before_status, after_status = current.get("status"), desired.get("status")
    before_main = {k: v for k, v in current.items() if k != "status"}
    after_main = {k: v for k, v in desired.items() if k != "status"}
    main_patch = create_merge_patch(before_main, after_main)
    status_patch = (
        {} if json_equal(before_status, after_status)
        else {"status": create_merge_patch(before_status or {}, after_status or {})}
    )  # fmt: skip
    if after_status is None and before_status is not None:
        status_patch = {"status": None}
    if not main_patch and not status_patch:
        return OperationResult.UNCHANGED, _replace(obj, desired)
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
