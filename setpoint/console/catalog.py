"""Every kind the cluster serves, from discovery, as the Resources view lists them.

Legacy discovery (``/api``, ``/api/v1``, ``/apis``, ``/apis/<group>/<version>`` of each
group's preferred version), which every API server serves. Group versions are read
concurrently; one that fails (an aggregated API that is down) is left out, not fatal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from setpoint.api.gvk import GroupVersion, ResourceInfo
from setpoint.client import ApiError, Client, ConnectionFailed
from setpoint.client.rest_mapper import parse_resource_list

__all__ = ["ServedKind", "served_kind", "served_kinds"]


@dataclass(frozen=True, slots=True)
class ServedKind:
    """One listable kind: what the page needs to list, watch and link it."""

    apiVersion: str  # the JSON key the page reads
    kind: str
    resource: str
    group: str
    namespaced: bool
    watchable: bool

    def to_json(self) -> dict[str, Any]:
        """The JSON the page reads."""
        return asdict(self)


def _served(info: ResourceInfo) -> ServedKind:
    return ServedKind(
        apiVersion=info.api_version,
        kind=info.kind,
        resource=info.resource,
        group=info.group,
        namespaced=info.namespaced,
        watchable="watch" in info.verbs,
    )


async def _group_versions(client: Client) -> list[GroupVersion]:
    found: list[GroupVersion] = []
    core = await client.request_json("GET", "/api")
    versions = core.get("versions") if isinstance(core, Mapping) else None
    if isinstance(versions, list) and versions:
        found.append(GroupVersion("", str(versions[0])))
    groups = await client.request_json("GET", "/apis")
    for group in groups.get("groups") or [] if isinstance(groups, Mapping) else []:
        if not isinstance(group, Mapping) or not isinstance(group.get("name"), str):
            continue
        preferred = group.get("preferredVersion")
        version = preferred.get("version") if isinstance(preferred, Mapping) else None
        if not version:
            listed = group.get("versions") or []
            version = listed[0].get("version") if listed else None
        if isinstance(version, str):
            found.append(GroupVersion(group["name"], version))
    return found


async def _resources(client: Client, gv: GroupVersion) -> list[ResourceInfo]:
    path = f"/apis/{gv.group}/{gv.version}" if gv.group else f"/api/{gv.version}"
    try:
        document = await client.request_json("GET", path)
    except (ApiError, ConnectionFailed):
        return []
    return parse_resource_list(gv, document if isinstance(document, Mapping) else {})


async def served_kinds(client: Client) -> list[ServedKind]:
    """The listable kinds of the preferred version of every group, sorted by kind."""
    group_versions = await _group_versions(client)
    lists = await asyncio.gather(*(_resources(client, gv) for gv in group_versions))
    kinds = {
        (info.group, info.kind): _served(info)
        for resources in lists
        for info in resources
        if "list" in info.verbs
    }
    return sorted(kinds.values(), key=lambda k: (k.kind.lower(), k.group))


async def served_kind(client: Client, api_version: str, kind: str) -> ServedKind | None:
    """``kind`` in ``api_version`` when the cluster serves it there, listable; the catalog has
    only each group's preferred version, and a link may name another (a CRD's older one)."""
    group, _, version = api_version.rpartition("/")
    for info in await _resources(client, GroupVersion(group, version)):
        if info.kind == kind and "list" in info.verbs:
            return _served(info)
    return None
